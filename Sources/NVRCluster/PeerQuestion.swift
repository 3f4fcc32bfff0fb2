import Foundation
import NIOSSL

/// Asks another node whether it reaches PostgreSQL now, and which cameras it holds (`GET
/// /api/node` at its advertised URL, with the nodes' key), with a deadline for the whole exchange. A blocking call for the lease keeper's peer thread:
/// nil when there is no answer (no URL, an https:// one without the node's published
/// certificate, a refused or silent connection, a malformed reply), which the keeper treats as
/// "cannot tell".
enum PeerQuestion {
    /// What the other node said.
    struct Answer: Equatable {
        var node: String
        var reachesIndex: Bool
        /// The cameras whose leases it holds.
        var cameras: Set<Int64> = []
    }

    static func ask(_ advertiseURL: String, key: String, timeout: Double, pinned: [NIOSSLCertificate]? = nil)
        -> Answer?
    {
        guard
            let reply = PeerHTTP.get(
                advertiseURL, path: "/api/node", headers: ["X-NVR-Node-Key": key], timeout: timeout, limit: 1 << 20,
                pinned: pinned)
        else { return nil }
        return parse(reply)
    }

    /// The answer in a reply: 200 with `{"node": …, "index": "reachable"|"unreachable"}`.
    static func parse(_ reply: PeerHTTP.Reply) -> Answer? {
        guard reply.status == 200 else { return nil }
        struct Body: Decodable {
            var node: String
            var index: String
            var cameras: [Int64]?
        }
        guard let b = try? JSONDecoder().decode(Body.self, from: Data(reply.body)),
            b.index == "reachable" || b.index == "unreachable"
        else { return nil }
        return Answer(node: b.node, reachesIndex: b.index == "reachable", cameras: Set(b.cameras ?? []))
    }
}
