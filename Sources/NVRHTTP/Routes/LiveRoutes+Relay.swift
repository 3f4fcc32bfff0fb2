import Foundation
import HTTPTypes
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOSSL
import NVRCluster
import NVRIndexPostgres
import Synchronization

/// The live view of a camera another recorder node records: relayed from that node's own live
/// view (design/scale-out.md), so a viewer on any node sees every camera.
extension LiveRoutes {
    struct RelayTarget: Sendable {
        var node: String
        /// ws://… (or wss://…) of the camera's live view on that node.
        var url: String
        var key: String
        /// For wss://: the certificates that node published, one of which it must present
        /// (PeerTrust).
        var pinned: [NIOSSLCertificate]?
    }

    /// The node that holds `camera`'s lease now, when it is not this one; nil on a server that
    /// is no node, or for a node reached over https:// that published no certificate.
    func relayTarget(camera name: String, substream: Bool) async -> RelayTarget? {
        guard let pg = index as? PostgresIndex, let me = pg.node else { return nil }
        return try? await offload { () -> RelayTarget? in
            guard let camera = try pg.camera(named: name), let id = camera.id,
                let lease = try pg.leases().first(where: { $0.cameraID == id }), lease.node != me,
                let base = try pg.nodes().first(where: { $0.name == lease.node })?.advertiseURL,
                var url = URLComponents(string: base), url.scheme == "http" || url.scheme == "https",
                let encoded = name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)
            else { return nil }
            var pinned: [NIOSSLCertificate]?
            if url.scheme == "https" {
                guard let published = try PeerTrust.load(pg, node: lease.node) else { return nil }
                pinned = published
            }
            url.scheme = url.scheme == "https" ? "wss" : "ws"
            url.path =
                (url.path.hasSuffix("/") ? String(url.path.dropLast()) : url.path) + "/api/cameras/\(encoded)/live"
            url.query = substream ? "stream=sub" : nil
            guard let s = url.string else { return nil }
            return RelayTarget(node: lease.node, url: s, key: try pg.nodeKey(), pinned: pinned)
        }
    }

    /// Forwards the other node's live view, message by message, until it ends. Returns how
    /// many messages it forwarded, and whether the viewer went away.
    func relay(_ target: RelayTarget, outbound: WebSocketOutboundWriter) async -> (forwarded: Int, viewerGone: Bool) {
        let state = Mutex((forwarded: 0, viewerGone: false))
        try? await PeerWebSocket.run(
            url: target.url, headers: [(AccessMiddleware.nodeKeyHeader.rawName, target.key)], pinned: target.pinned
        ) { message in
            do {
                switch message {
                case .text(let t): try await outbound.write(.text(t))
                case .binary(let b): try await outbound.write(.binary(b))
                }
            } catch {
                state.withLock { $0.viewerGone = true }
                throw error
            }
            state.withLock { $0.forwarded += 1 }
        }
        return state.withLock { $0 }
    }
}
