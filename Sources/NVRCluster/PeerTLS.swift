import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// The `https://` half of PeerHTTP: one request written over TLS (NIOSSL, on NIO's shared event
/// loops) and everything the peer sends until it closes, blocking, within one deadline and a
/// limit on size. The peer must present one of `pinned` (PeerTrust: the certificates the node
/// published in the index) as its own; no certificate authority and no host name count.
enum PeerTLS {
    static func exchange(
        host: String, port: Int, request: [UInt8], pinned: [NIOSSLCertificate], deadline: Double, limit: Int
    ) -> [UInt8]? {
        let left = deadline - PeerHTTP.monotonic()
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .noHostnameVerification
        tls.trustRoots = .certificates([])  // the custom check below decides, not the system's roots
        guard left > 0, !pinned.isEmpty, let context = try? NIOSSLContext(configuration: tls) else { return nil }
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let done = loop.makePromise(of: [UInt8].self)
        // SNI carries host names only; with an address the certificate is still checked.
        let sni: String? = PeerTrust.isAddress(host) ? nil : host
        let timeout = TimeAmount.milliseconds(Int64(left * 1000))
        let deadlineTask = loop.scheduleTask(in: timeout) { done.fail(ChannelError.connectTimeout(timeout)) }
        ClientBootstrap(group: loop)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    // Replaces BoringSSL's own check: the peer's certificate is the published one.
                    try channel.pipeline.syncOperations.addHandler(
                        NIOSSLClientHandler(context: context, serverHostname: sni) { chain, verdict in
                            verdict.succeed(PeerTrust.accepts(chain, pinned: pinned) ? .certificateVerified : .failed)
                        })
                    try channel.pipeline.syncOperations.addHandler(Collector(done: done, limit: limit))
                }
            }
            .connect(host: host, port: port)
            .whenComplete { result in
                switch result {
                case .success(let channel):
                    done.futureResult.whenComplete { _ in channel.close(promise: nil) }
                    channel.writeAndFlush(ByteBuffer(bytes: request), promise: nil)
                case .failure(let error):
                    done.fail(error)
                }
            }
        defer { deadlineTask.cancel() }
        return try? done.futureResult.wait()
    }

    /// Gathers the reply until the peer closes (the request said `Connection: close`); more
    /// than `limit` bytes fail it. A peer closing without TLS's close_notify still ends the reply
    /// (the body's Content-Length, checked by PeerHTTP.parse, says whether it is whole).
    final class Collector: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let done: EventLoopPromise<[UInt8]>
        let limit: Int
        var bytes: [UInt8] = []

        init(done: EventLoopPromise<[UInt8]>, limit: Int) {
            self.done = done
            self.limit = limit
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            bytes += buffer.readBytes(length: buffer.readableBytes) ?? []
            if bytes.count > limit {
                done.fail(ChannelError.inputClosed)
                context.close(promise: nil)
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            done.succeed(bytes)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            if let e = error as? NIOSSLError, case .uncleanShutdown = e {
                done.succeed(bytes)
            } else {
                done.fail(error)
            }
            context.close(promise: nil)
        }
    }
}
