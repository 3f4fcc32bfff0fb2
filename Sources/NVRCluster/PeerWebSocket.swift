import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket

/// A WebSocket to another node (its live view, for the relay): `ws://`, or `wss://` to a peer
/// presenting one of `pinned` (PeerTrust: the certificates it published), checked as PeerTLS
/// checks them, whatever the certificate's kind. Whole messages are handed to the caller as
/// they come; pings are answered. Built on NIO's own upgrader and frame codec rather than a
/// WebSocket client library, whose TLS takes no custom verification.
public enum PeerWebSocket {
    public enum Message: Sendable {
        case text(String)
        case binary(ByteBuffer)
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    enum Upgrade: Sendable {
        case websocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case refused
    }

    /// Connects, upgrades with `headers`, and calls `onMessage` with every whole message until
    /// the peer closes, or `onMessage` throws (then that error). Throws when the peer cannot be
    /// reached, is not trusted, or refuses the upgrade (within `timeout` seconds), or sends a
    /// message over `maxMessage` bytes.
    public static func run(
        url: String, headers: [(String, String)], pinned: [NIOSSLCertificate]?, maxMessage: Int = 1 << 24,
        timeout: Double = 10, onMessage: @escaping @Sendable (Message) async throws -> Void
    ) async throws {
        guard let parts = URLComponents(string: url), let scheme = parts.scheme, scheme == "ws" || scheme == "wss",
            let host = parts.host, !host.isEmpty
        else { throw Failure(description: "not a ws:// or wss:// URL: \(url)") }
        let secure = scheme == "wss"
        let port = parts.port ?? (secure ? 443 : 80)
        guard (1...65535).contains(port) else { throw Failure(description: "no such port: \(url)") }
        var context: NIOSSLContext?
        if secure {
            guard let pinned, !pinned.isEmpty else {
                throw Failure(description: "no certificate published for \(host):\(port)")
            }
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.certificateVerification = .noHostnameVerification
            tls.trustRoots = .certificates([])  // the custom check decides
            context = try NIOSSLContext(configuration: tls)
        }
        let pins = pinned ?? []
        let sni: String? = PeerTrust.isAddress(host) ? nil : host
        let path =
            (parts.percentEncodedPath.isEmpty ? "/" : parts.percentEncodedPath)
            + (parts.percentEncodedQuery.map { "?" + $0 } ?? "")
        var requestHeaders = HTTPHeaders()
        requestHeaders.add(name: "Host", value: host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)")
        for (name, value) in headers { requestHeaders.add(name: name, value: value) }
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: requestHeaders)
        let wait = TimeAmount.milliseconds(Int64(timeout * 1000))
        let upgraded = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(wait)
            .connect(host: host, port: port) { channel -> EventLoopFuture<EventLoopFuture<Upgrade>> in
                channel.eventLoop.makeCompletedFuture {
                    // The handshake and the upgrade's answer within `timeout` too.
                    let deadline = channel.eventLoop.scheduleTask(in: wait) { channel.close(promise: nil) }
                    if let context {
                        try channel.pipeline.syncOperations.addHandler(
                            NIOSSLClientHandler(context: context, serverHostname: sni) { chain, verdict in
                                verdict.succeed(PeerTrust.accepts(chain, pinned: pins) ? .certificateVerified : .failed)
                            })
                    }
                    let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(maxFrameSize: maxMessage) { channel, _ in
                        deadline.cancel()
                        return channel.eventLoop.makeCompletedFuture {
                            .websocket(
                                try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(
                                    wrappingChannelSynchronously: channel))
                        }
                    }
                    var configuration = NIOUpgradableHTTPClientPipelineConfiguration(
                        upgradeConfiguration: NIOTypedHTTPClientUpgradeConfiguration(
                            upgradeRequestHead: head, upgraders: [upgrader],
                            notUpgradingCompletionHandler: { channel in
                                deadline.cancel()
                                return channel.eventLoop.makeCompletedFuture { Upgrade.refused }
                            }))
                    configuration.leftOverBytesStrategy = .forwardBytes
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
                        configuration: configuration)
                }
            }
            .get()
        guard case .websocket(let socket) = upgraded else {
            throw Failure(description: "\(host):\(port) refused the WebSocket upgrade")
        }
        try await socket.executeThenClose { inbound, outbound in
            var message: ByteBuffer?
            var isText = false
            for try await frame in inbound {
                switch frame.opcode {
                case .text, .binary:
                    message = frame.unmaskedData
                    isText = frame.opcode == .text
                case .continuation:
                    guard var started = message else { throw Failure(description: "a continuation of nothing") }
                    var more = frame.unmaskedData
                    started.writeBuffer(&more)
                    message = started
                case .ping:
                    try await outbound.write(
                        WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData))
                    continue
                case .connectionClose:
                    try? await outbound.write(
                        WebSocketFrame(
                            fin: true, opcode: .connectionClose, maskKey: .random(), data: frame.unmaskedData))
                    return
                default:
                    continue
                }
                if let m = message, m.readableBytes > maxMessage {
                    throw Failure(description: "a message over \(maxMessage) bytes")
                }
                guard frame.fin, let whole = message else { continue }
                message = nil
                try await onMessage(isText ? .text(String(buffer: whole)) : .binary(whole))
            }
        }
    }
}
