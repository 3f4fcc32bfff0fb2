import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NVRAccess
import NVRPlayback
import NVRStorage
import NVRWorker
import SwiftASN1
import X509

/// HTTPS (admin): whether this server speaks it and with which certificate, and a self-signed
/// certificate made for this machine, as `nvr tls self-signed` makes it. The server reads its
/// certificate at start (nvr.toml's [http] tls_cert and tls_key), so a new one is used after
/// those are set and nvr restarts: the answer gives the lines.
struct TLSRoutes: APIRoutes {
    let storage: StorageLayout
    /// This server speaks HTTPS (with a certificate from nvr.toml).
    let https: Bool
    /// The certificate it loaded at start, as read then (nil: plain HTTP, or unreadable here).
    let serving: CertificateJSON?
    let audit: AuditLog
    /// One certificate made at a time.
    let making = OneAtATime()

    init(storage: StorageLayout, certificate: String?, audit: AuditLog) {
        self.storage = storage
        https = certificate != nil
        serving = certificate.flatMap { try? Self.describe($0) }
        self.audit = audit
    }

    func register(on router: Router<NVRContext>) {
        router.get("/api/tls") { _, c in
            try admin(c)
            return try await offload { [https, serving, folder] in
                try JSON.response(Self.status(https: https, serving: serving, folder: folder))
            }
        }
        router.post("/api/tls/self-signed") { r, c in try await makeSelfSigned(r, c) }
    }

    struct CertificateJSON: Encodable {
        var path: String
        /// SHA-256 of the certificate (DER), colon-separated hex: what a browser's warning shows.
        var fingerprint: String
        var notAfter: String
        /// Its subject alternative names (DNS names and IP addresses).
        var names: [String]
    }

    struct StatusJSON: Encodable {
        var https: Bool
        /// nil with https: the file could not be read at start (the server could).
        var certificate: CertificateJSON?
        /// A certificate made here (by the page) and where it is, used or not.
        var made: CertificateJSON?
        /// The nvr.toml lines that use `made`.
        var config: String?
    }

    /// Where the page's certificate goes: tls/ in the storage root, which the server may write.
    var folder: String { storage.root + "/tls" }

    /// The first certificate of a PEM file (a chain's leaf).
    static func describe(_ path: String) throws -> CertificateJSON {
        let pem = try String(contentsOfFile: path, encoding: .utf8)
        guard
            let leaf = try PEMDocument.parseMultiple(pemString: pem).first(where: { $0.discriminator == "CERTIFICATE" })
        else {
            throw ConfigError("no certificate in \(path)")
        }
        let cert = try Certificate(derEncoded: leaf.derBytes)
        var der = DER.Serializer()
        try der.serialize(cert)
        let names =
            (try? cert.extensions.subjectAlternativeNames)??.map { name -> String in
                switch name {
                case .dnsName(let n): return n
                case .ipAddress(let a): return Self.address(Array(a.bytes))
                default: return "\(name)"
                }
            } ?? []
        return CertificateJSON(
            path: path,
            fingerprint: SHA256.hash(data: der.serializedBytes).map { String(format: "%02X", $0) }.joined(
                separator: ":"),
            notAfter: ISO8601DateFormatter().string(from: cert.notValidAfter), names: names)
    }

    static func address(_ bytes: [UInt8]) -> String {
        var out = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        guard bytes.count == 4 || bytes.count == 16,
            bytes.withUnsafeBytes({ inet_ntop(family, $0.baseAddress, &out, socklen_t(out.count)) }) != nil
        else { return bytes.map { String($0) }.joined(separator: ".") }
        return String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// What is served, and the certificate made here when both its files are there.
    static func status(https: Bool, serving: CertificateJSON?, folder: String) -> StatusJSON {
        let both = ["cert.pem", "key.pem"].allSatisfy { FileManager.default.fileExists(atPath: folder + "/" + $0) }
        let made = both ? try? describe(folder + "/cert.pem") : nil
        return StatusJSON(
            https: https, certificate: serving, made: made,
            config: made.map { _ in config(cert: folder + "/cert.pem", key: folder + "/key.pem") })
    }

    static func config(cert: String, key: String) -> String {
        SelfSignedCertificate.configLines(cert: cert, key: key)
    }

    struct MadeJSON: Encodable {
        var certificate: CertificateJSON
        var key: String
        /// What to put in nvr.toml, then restart nvr.
        var config: String
    }

    /// POST /api/tls/self-signed[?force=true]: cert.pem and key.pem (owner-only) in the storage
    /// root's tls/ folder, for this machine's names and addresses; 409 when they exist and
    /// force is not given.
    func makeSelfSigned(_ r: Request, _ c: NVRContext) async throws -> Response {
        let who = try admin(c)
        let force = try Query(request: r).flag("force")
        let (cert, key) = (folder + "/cert.pem", folder + "/key.pem")
        guard making.claim("tls") else {
            throw APIError(.conflict, "busy", "a certificate is being made; try again in a moment")
        }
        defer { making.release("tls") }
        let made = try await offload { [folder] () throws -> MadeJSON in
            for f in [cert, key] where FileManager.default.fileExists(atPath: f) && !force {
                throw APIError(.conflict, "exists", "\(f) exists; make a new one to replace it (force=true)")
            }
            let local = SelfSignedCertificate.localNamesAndAddresses()
            let made = try SelfSignedCertificate(names: local.names, addresses: local.addresses)
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            do { try made.write(cert: cert, key: key) } catch SelfSignedCertificate.WriteError.permissions(let why) {
                throw APIError(
                    .conflict, "permissions", "\(why): use nvr tls self-signed --out-dir on another disk")
            } catch SelfSignedCertificate.WriteError.failed(let why) {
                throw APIError(.internalServerError, "internal", why)
            }
            return MadeJSON(certificate: try Self.describe(cert), key: key, config: Self.config(cert: cert, key: key))
        }
        audit.record(
            who.name, "tls.self-signed", detail: ["fingerprint": made.certificate.fingerprint], address: c.remoteAddress
        )
        return try JSON.response(made, status: .created)
    }
}
