import Foundation
import NIOSSL
import NVRIndex
import NVRIndexPostgres
import Synchronization

/// Whom a node trusts when it reaches another over `https://`: exactly the certificate that node
/// published in the index when it started (`[http] tls_cert`), not any certificate authority and
/// not the host name (an advertised address is seldom in a LAN certificate): fetches, questions
/// (PeerTLS) and the live relay (PeerWebSocket) compare the certificate the peer presents with
/// the published ones. The index is shared
/// and trusted by every node, so the certificate there is the node's. A node that serves HTTPS
/// without having published its certificate (an older version) is not reached.
public final class PeerTrust: Sendable {
    /// The settings key of a node's certificate (PEM).
    public static func settingKey(node: String) -> String { "cluster.tls_certificate." + node }

    private let pinned = Mutex<[String: [NIOSSLCertificate]]>([:])

    public init() {}

    /// Publishes this node's certificate (nil: it serves plain HTTP, and an old one goes).
    public static func publish(_ index: PostgresIndex, node: String, certificatePEM: String?) throws {
        try index.setSetting(settingKey(node: node), certificatePEM)
    }

    /// The node's own certificate from its `tls_cert` file, alone, as PEM: not the rest of a
    /// chain (a peer compares the certificate it is shown with the first one published).
    public static func leafPEM(file: String) throws -> String {
        guard let leaf = try NIOSSLCertificate.fromPEMFile(file).first else {
            throw IndexError("no certificate in \(file)")
        }
        let base64 = Data(try leaf.toDERBytes()).base64EncodedString(options: [.lineLength64Characters])
        return "-----BEGIN CERTIFICATE-----\n\(base64)\n-----END CERTIFICATE-----\n"
    }

    /// The certificates in `pem` (the node's own first).
    public static func certificates(pem: String) throws -> [NIOSSLCertificate] {
        try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8))
    }

    /// The certificates `node` published, read from the index now.
    public static func load(_ index: PostgresIndex, node: String) throws -> [NIOSSLCertificate]? {
        try index.setting(settingKey(node: node)).map(certificates(pem:))
    }

    /// Whether the certificate a peer presented is the one it published (the first of
    /// `pinned`: only a node's own certificate is published, but an older version published its
    /// whole file).
    public static func accepts(_ chain: [NIOSSLCertificate], pinned: [NIOSSLCertificate]) -> Bool {
        guard let leaf = chain.first, let mine = pinned.first else { return false }
        return leaf == mine
    }

    /// Reads the published certificates of `nodes` (kept for when the index is unreachable:
    /// during an outage the nodes still ask each other).
    /// A node whose certificate cannot be read now (PostgreSQL going away mid-refresh) keeps
    /// the one read before.
    func refresh(_ index: PostgresIndex, nodes: [String]) {
        var found: [String: [NIOSSLCertificate]] = [:]
        let before = pinned.withLock { $0 }
        for node in nodes {
            do {
                if let c = try Self.load(index, node: node) { found[node] = c }
            } catch {
                found[node] = before[node]
            }
        }
        pinned.withLock { $0 = found }
    }

    func certificates(node: String) -> [NIOSSLCertificate]? { pinned.withLock { $0[node] } }

    /// Whether `host` is an IP address (TLS's SNI takes host names only).
    public static func isAddress(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, bare, &v4) == 1 || inet_pton(AF_INET6, bare, &v6) == 1
    }
}
