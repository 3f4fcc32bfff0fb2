import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import NVRHTTP

/// The connection guard on simulated time (an EmbeddedChannel with NIO's HTTP decoder and
/// encoder): timeouts never cut a response that is owed, and a refusal never overtakes one.
struct ConnectionGuardTests {
    /// Holds each whole request until the test answers it.
    final class HeldRequests: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        var waiting = 0
        var context: ChannelHandlerContext?
        func handlerAdded(context: ChannelHandlerContext) { self.context = context }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if case .end = unwrapInboundIn(data) { waiting += 1 }
        }
        func answer() {
            guard let context, waiting > 0 else { return }
            waiting -= 1
            var headers = HTTPHeaders()
            headers.add(name: "Content-Length", value: "2")
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil
            )
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "ok")))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }

    static func connection() throws -> (EmbeddedChannel, HeldRequests, ConnectionLimits) {
        let limits = ConnectionLimits()
        let channel = EmbeddedChannel()
        let guardian = ConnectionGuard(limits: limits, registry: ConnectionRegistry(limits: limits))
        let held = HeldRequests()
        let sync = channel.pipeline.syncOperations
        try sync.addHandler(HTTPResponseEncoder())
        try sync.addHandler(ConnectionGuard.BytesSide(guardian))
        try sync.addHandler(ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes)))
        try sync.addHandler(ConnectionGuard.RequestsSide(guardian))
        try sync.addHandler(held)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return (channel, held, limits)
    }

    static func written(_ channel: EmbeddedChannel) -> String {
        var out = ""
        while case .some(let part) = try? channel.readOutbound(as: IOData.self) {
            if case .byteBuffer(let b) = part { out += String(buffer: b) }
        }
        return out
    }

    @Test func slowAnswersToPipelinedRequestsAreNotCutByTheTimeouts() throws {
        let (channel, held, limits) = try Self.connection()
        try channel.writeInbound(
            ByteBuffer(string: "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n"))
        #expect(held.waiting == 2)
        // Both are owed for longer than the header and idle timeouts together.
        channel.embeddedEventLoop.advanceTime(by: limits.headerTimeout + limits.idleTimeout + .seconds(5))
        #expect(channel.isActive)
        held.answer()
        channel.embeddedEventLoop.advanceTime(by: limits.idleTimeout + .seconds(5))
        #expect(channel.isActive, "one answer is still owed")
        held.answer()
        #expect(Self.written(channel).components(separatedBy: "HTTP/1.1 200 OK").count == 3)
        // Now idle: closed after the idle timeout, without an answer.
        channel.embeddedEventLoop.advanceTime(by: limits.idleTimeout - .seconds(1))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive)
    }

    @Test func aRefusalWaitsForTheAnswersOwedBeforeIt() throws {
        let (channel, held, _) = try Self.connection()
        try? channel.writeInbound(
            ByteBuffer(string: "GET /a HTTP/1.1\r\nHost: x\r\n\r\nFOO /b HTTP/1.1\r\nHost: x\r\n\r\n"))
        #expect(held.waiting == 1)
        #expect(Self.written(channel).isEmpty, "nothing answered before the first request's answer")
        held.answer()
        let out = Self.written(channel)
        let ok = try #require(out.range(of: "HTTP/1.1 200 OK"))
        let refused = try #require(out.range(of: "HTTP/1.1 501 Not Implemented"))
        #expect(ok.lowerBound < refused.lowerBound)
        #expect(out[refused.lowerBound...].contains("Connection: close"))
    }

    @Test func aPipelinedRequestTooSlowAfterTheAnswerIs408() throws {
        let (channel, held, limits) = try Self.connection()
        try channel.writeInbound(ByteBuffer(string: "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HT"))
        channel.embeddedEventLoop.advanceTime(by: limits.headerTimeout * 3)
        #expect(channel.isActive && Self.written(channel).isEmpty, "the first answer is owed: no timeout runs")
        held.answer()
        // The rest of the pipelined request trickles in: its headers have their time from its
        // first byte after the answer (had none come, the idle timeout would end it).
        try channel.writeInbound(ByteBuffer(string: "T"))
        channel.embeddedEventLoop.advanceTime(by: limits.headerTimeout + .seconds(1))
        let out = Self.written(channel)
        #expect(out.contains("HTTP/1.1 200 OK") && out.contains("HTTP/1.1 408 Request Timeout"), "\(out)")
    }
}
