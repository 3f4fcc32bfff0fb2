import Foundation
import NVRIndex

/// Where a PostgreSQL index lives: `postgresql://user@host:port/database` (the config's
/// `[index] url`), with the password from a file or the environment, never from the URL, so
/// the URL may be logged and shown. TLS as libpq's `sslmode`: `require` encrypts without
/// checking the server's certificate, `verify-full` checks it (against the system's CAs, or
/// `sslrootcert=FILE`) and its name.
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var user: String
    public var database: String
    public var password: String?
    public enum TLSMode: String, Sendable { case disable, require, verifyFull = "verify-full" }
    public var tls: TLSMode
    /// A CA file for verify-full (else the system's CAs).
    public var rootCertificate: String?

    /// The environment variable a password may come from.
    public static let passwordVariable = "NVR_INDEX_PASSWORD"

    /// Parses `url`; the password is read from `passwordFile` when given, else from
    /// NVR_INDEX_PASSWORD in `environment`. A password inside the URL is refused: URLs end up in
    /// logs, shell histories and `ps`.
    public init(
        url: String, passwordFile: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws {
        guard let parts = URLComponents(string: url), let scheme = parts.scheme,
            scheme == "postgresql" || scheme == "postgres"
        else {
            throw IndexError("index url must look like postgresql://user@host:5432/database")
        }
        guard parts.password == nil else {
            throw IndexError(
                "index url must not hold a password: put it in a file ([index] password_file) or in \(Self.passwordVariable)"
            )
        }
        guard let host = parts.host, !host.isEmpty else { throw IndexError("index url has no host") }
        guard let user = parts.user, !user.isEmpty else { throw IndexError("index url has no user (user@host)") }
        let database = String(parts.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else {
            throw IndexError("index url has no database name (postgresql://user@host/database)")
        }
        let port = parts.port ?? 5432
        guard (1...65535).contains(port) else { throw IndexError("index url's port \(port) is out of range") }
        self.host = host
        self.port = port
        self.user = user
        self.database = database
        tls = .disable
        for item in parts.queryItems ?? [] {
            switch (item.name, item.value ?? "") {
            case ("sslmode", let v):
                guard let mode = TLSMode(rawValue: v) else {
                    throw IndexError("index url: sslmode must be disable, require or verify-full")
                }
                tls = mode
            case ("sslrootcert", let v) where !v.isEmpty: rootCertificate = v
            default: throw IndexError("index url: unknown option \(item.name)=\(item.value ?? "")")
            }
        }
        if rootCertificate != nil && tls != .verifyFull {
            throw IndexError("index url: sslrootcert goes with sslmode=verify-full")
        }
        if let passwordFile {
            guard let text = try? String(contentsOfFile: passwordFile, encoding: .utf8) else {
                throw IndexError("cannot read the index password file \(passwordFile)")
            }
            password = text.trimmingCharacters(in: .newlines)
        } else {
            password = environment[Self.passwordVariable]
        }
    }

    /// The URL without any secret: what logs and `nvr` print.
    public var description: String {
        "postgresql://\(user)@\(host.contains(":") ? "[\(host)]" : host):\(port)/\(database)"
            + (tls == .disable ? "" : "?sslmode=\(tls.rawValue)")
            + (rootCertificate.map { "&sslrootcert=\($0)" } ?? "")
    }
}
