import NIOCore
import NIOEmbedded
import NIOHTTP1
import NVRHTTP

extension FuzzTargets {
    /// What a client sends on one connection (pieces: the writes, in order), through NIO's
    /// HTTP decoder with the server's limits and the connection guard, to a server that answers
    /// every request 200. Checks that a request the decoder refuses is answered with one of
    /// the guard's statuses and `Connection: close`, that nothing is answered after it, and
    /// that the connection is closed once the guard's linger has passed.
    static let httpRequest: Target = { data in
        let limits = ConnectionLimits()
        let channel = EmbeddedChannel()
        let guardian = ConnectionGuard(limits: limits, registry: ConnectionRegistry(limits: limits))
        let answers = AnswerEveryRequest()
        var decoderLimits = NIOHTTPDecoderLimitConfiguration()
        decoderLimits.maxHeaderFieldSize = limits.maxLine
        decoderLimits.maxHeaderListSize = limits.maxHeaderBytes
        decoderLimits.maxHeaderFieldCount = limits.maxHeaderCount
        let encoder = HTTPResponseEncoder()
        do {
            let sync = channel.pipeline.syncOperations
            try sync.addHandler(encoder)
            try sync.addHandler(ConnectionGuard.BytesSide(guardian))
            try sync.addHandler(
                ByteToMessageHandler(
                    HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes, limitConfiguration: decoderLimits)))
            try sync.addHandler(ConnectionGuard.RequestsSide(guardian))
            try sync.addHandler(answers)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        } catch {
            preconditionFailure("pipeline: \(error)")
        }
        for piece in pieces(data) where channel.isActive {
            _ = try? channel.writeInbound(ByteBuffer(bytes: piece))
        }
        // Everything the server wrote, in order.
        var out = ByteBuffer()
        while case .some(let part) = try? channel.readOutbound(as: IOData.self) {
            if case .byteBuffer(var b) = part { out.writeBuffer(&b) }
        }
        let text = String(decoding: out.readableBytesView, as: UTF8.self)
        let statuses = text.components(separatedBy: "HTTP/1.1 ").dropFirst().compactMap { Int($0.prefix(3)) }
        let refusals: Set<Int> = [400, 408, 414, 431, 501]
        for (i, s) in statuses.enumerated() {
            precondition(s == 200 || refusals.contains(s), "status \(s)")
            // A refusal is the last answer on its connection.
            precondition(!refusals.contains(s) || i == statuses.count - 1, "answered after a refusal: \(statuses)")
        }
        if let last = statuses.last, refusals.contains(last) {
            precondition(text.contains("Connection: close"), "a refusal without Connection: close")
        }
        if guardian.rejected {
            channel.embeddedEventLoop.advanceTime(by: limits.linger + .milliseconds(1))
            precondition(!channel.isActive, "refused and still open after the linger")
        }
        _ = try? channel.finish()
    }

    /// Answers every whole request 200 with an empty body, kept alive.
    final class AnswerEveryRequest: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard case .end = unwrapInboundIn(data) else { return }
            var headers = HTTPHeaders()
            headers.add(name: "Content-Length", value: "0")
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil
            )
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}
