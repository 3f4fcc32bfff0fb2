import ArgumentParser
import Foundation
import NVRHTTP

/// `nvr tls self-signed`: a certificate for HTTPS on a LAN box.
struct TLSCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tls", abstract: "Make a certificate for HTTPS.", subcommands: [SelfSigned.self])

    struct SelfSigned: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "self-signed",
            abstract: "Write a self-signed certificate and key (owner-only) for this machine's names and addresses.",
            discussion:
                "Then set [http] tls_cert and tls_key in nvr.toml (printed below). Browsers warn once; compare the fingerprint."
        )
        @Option(help: "Folder for cert.pem and key.pem.") var outDir: String = "."
        @Option(name: .customLong("name"), help: "Another DNS name to include (repeatable).") var names: [String] = []
        @Option(name: .customLong("address"), help: "Another IP address to include (repeatable).") var addresses:
            [String] = []
        @Option(help: "Days it is valid.") var days: Int = 3650
        @Flag(help: "Replace existing files.") var force = false

        func run() throws {
            let local = SelfSignedCertificate.localNamesAndAddresses()
            let made = try SelfSignedCertificate(
                names: local.names + names, addresses: local.addresses + addresses, days: days)
            let dir = URL(fileURLWithPath: outDir)
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            let cert = dir.appendingPathComponent("cert.pem")
            let key = dir.appendingPathComponent("key.pem")
            for f in [cert, key] where FileManager.default.fileExists(atPath: f.path) && !force {
                throw CommandFailure("\(f.path) exists (--force replaces it)")
            }
            // The key owner-only from its first byte, the old pair whole if anything fails.
            do { try made.write(cert: cert.path, key: key.path) } catch { throw CommandFailure("\(error)") }
            print(
                """
                wrote \(cert.path) and \(key.path)
                valid \(days) days for: \((local.names + names + local.addresses + addresses).joined(separator: ", "))
                SHA-256 fingerprint: \(made.fingerprint)
                in nvr.toml:
                """)
            print(
                SelfSignedCertificate.configLines(cert: cert.path, key: key.path).split(separator: "\n").map {
                    "  " + $0
                }
                .joined(separator: "\n"))
        }
    }
}
