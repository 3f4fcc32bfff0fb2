import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket

/// A WebSocket to another node (its live view, for the relay): `ws://`, or `wss://` to a peer
/// presenting one of `pinned` (PeerTrust: the certificates it published), checked as PeerTLS
/// checks them, whatever the certificate's kind. Whole messages are handed to the caller as
/// they come; pings are answered; a peer silent for 65 s is left. Built on NIO's own upgrader and frame codec rather than a
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
            var host = parts.host, !host.isEmpty
        else { throw Failure(description: "not a ws:// or wss:// URL: \(url)") }
        // URLComponents keeps an IPv6 address's brackets.
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
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
                            // Fragments joined into whole messages (bounded), and an owner that
                            // goes silent (a power cut: no close ever comes; it pings every 30 s)
                            // ends the relay, so the viewer's node looks for the camera again.
                            try channel.pipeline.syncOperations.addHandlers(
                                NIOWebSocketFrameAggregator(
                                    minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 4096,
                                    maxAccumulatedFrameSize: maxMessage),
                                IdleStateHandler(readTimeout: .seconds(65)), CloseWhenIdle())
                            return .websocket(
                                try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(
                                    wrappingChannelSynchronously: channel))
                        }
                    }
                    var configuration = NIOUpgradableHTTPClientPipelineConfiguration(
                        upgradeConfiguration: NIOTypedHTTPClientUpgradeConfiguration(
                            upgradeRequestHead: head, upgraders: [upgrader],
                            notUpgradingCompletionHandler: { channel in
                                deadline.cancel()
                                channel.close(promise: nil)
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
            for try await frame in inbound {
                switch frame.opcode {
                case .text:
                    try await onMessage(.text(String(buffer: frame.unmaskedData)))
                case .binary:
                    try await onMessage(.binary(frame.unmaskedData))
                case .ping:
                    try await outbound.write(
                        WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData))
                case .connectionClose:
                    try? await outbound.write(
                        WebSocketFrame(
                            fin: true, opcode: .connectionClose, maskKey: .random(), data: frame.unmaskedData))
                    return
                default:
                    continue  // an unasked pong
                }
            }
        }
    }

    /// Closes the connection when IdleStateHandler says nothing came for its read timeout.
    final class CloseWhenIdle: ChannelInboundHandler, Sendable {
        typealias InboundIn = WebSocketFrame

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if event is IdleStateHandler.IdleStateEvent {
                context.close(promise: nil)
            } else {
                context.fireUserInboundEventTriggered(event)
            }
        }
    }
}
