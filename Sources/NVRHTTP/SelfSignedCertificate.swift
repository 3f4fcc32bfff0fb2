import Crypto
import Foundation
import SwiftASN1
import X509

/// A self-signed certificate for a NVR on a LAN (`nvr tls self-signed`): P-256, valid for the
/// machine's names and addresses, ten years. Browsers warn once; the fingerprint printed next
/// to it is how a user checks they reached their own box.
public struct SelfSignedCertificate: Sendable {
    public let certificatePEM: String
    public let privateKeyPEM: String
    /// SHA-256 of the certificate (DER), as colon-separated hex.
    public let fingerprint: String

    public init(names: [String], addresses: [String], days: Int = 3650) throws {
        let key = P256.Signing.PrivateKey()
        let subject = try DistinguishedName {
            CommonName(names.first ?? "nvr")
            OrganizationName("nvr")
        }
        var sans: [GeneralName] = names.map { .dnsName($0) }
        for a in addresses {
            if let v4 = Self.ipv4(a) {
                sans.append(.ipAddress(ASN1OctetString(contentBytes: ArraySlice(v4))))
            } else if let v6 = Self.ipv6(a) {
                sans.append(.ipAddress(ASN1OctetString(contentBytes: ArraySlice(v6))))
            }
        }
        let now = Date()
        let cert = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(Double(days) * 86_400),
            issuer: subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                KeyUsage(digitalSignature: true)
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(sans)
            },
            issuerPrivateKey: .init(key))
        certificatePEM = try cert.serializeAsPEM().pemString
        privateKeyPEM = key.pemRepresentation
        var der = DER.Serializer()
        try der.serialize(cert)
        fingerprint = SHA256.hash(data: der.serializedBytes).map { String(format: "%02X", $0) }.joined(separator: ":")
    }

    static func ipv4(_ s: String) -> [UInt8]? {
        var a = in_addr()
        return inet_pton(AF_INET, s, &a) == 1 ? withUnsafeBytes(of: &a) { Array($0) } : nil
    }

    static func ipv6(_ s: String) -> [UInt8]? {
        var a = in6_addr()
        return inet_pton(AF_INET6, s, &a) == 1 ? withUnsafeBytes(of: &a) { Array($0) } : nil
    }

    /// The nvr.toml lines that use a certificate and key, each path a TOML basic string.
    /// Why the pair could not be written.
    public enum WriteError: Error, CustomStringConvertible {
        /// The key's file system keeps no permissions: it cannot be owner-only.
        case permissions(String)
        case failed(String)
        public var description: String {
            switch self {
            case .permissions(let s), .failed(let s): s
            }
        }
    }

    /// Writes the pair to `cert` and `key`. Both are written beside the old pair, then renamed
    /// over it, key first: a failure leaves the old pair whole. The key is owner-only from its
    /// first byte: made empty with 0600 (checked: some file systems keep no permissions), then
    /// written.
    public func write(cert: String, key: String) throws {
        let (newKey, newCert) = (key + ".new", cert + ".new")
        defer { for f in [newKey, newCert] { try? FileManager.default.removeItem(atPath: f) } }
        try? FileManager.default.removeItem(atPath: newKey)
        var st = stat()
        guard FileManager.default.createFile(atPath: newKey, contents: nil, attributes: [.posixPermissions: 0o600]),
            chmod(newKey, 0o600) == 0, stat(newKey, &st) == 0, st.st_mode & 0o077 == 0
        else {
            throw WriteError.permissions(
                "cannot make \(key) readable by its owner only (its file system keeps no permissions)")
        }
        try Data(privateKeyPEM.utf8).write(to: URL(fileURLWithPath: newKey))
        try Data(certificatePEM.utf8).write(to: URL(fileURLWithPath: newCert))
        guard rename(newKey, key) == 0, rename(newCert, cert) == 0 else {
            throw WriteError.failed(
                "cannot put the new certificate in place of \(cert): \(String(cString: strerror(errno)))")
        }
    }

    public static func configLines(cert: String, key: String) -> String {
        let toml = { (path: String) in
            "\"" + path.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        return "[http]\ntls_cert = \(toml(cert))\ntls_key = \(toml(key))\n"
    }

    /// This machine's names and addresses, for the certificate's subject alternative names.
    public static func localNamesAndAddresses() -> (names: [String], addresses: [String]) {
        var names = ["localhost"]
        var buf = [CChar](repeating: 0, count: 256)
        if gethostname(&buf, buf.count) == 0 {
            let h = String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if !h.isEmpty && h != "localhost" {
                names.insert(h, at: 0)
                names.append(h + ".local")
            }
        }
        return (names, Array(Set(AllowedHosts.interfaceAddresses())).sorted())
    }
}
