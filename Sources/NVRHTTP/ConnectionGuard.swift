import NIOCore
import NIOHTTP1

/// Keeps one HTTP connection honest: a request the decoder cannot take (too long a line, too
/// many or too large headers, an unknown method, bytes with no place in a request) is
/// answered with its status and `Connection: close`, and the connection is closed; so is a
/// request whose headers take longer than `headerTimeout` (408), and a kept-alive connection
/// idle for `idleTimeout`. Hummingbird's WebSocket-upgrading pipeline answers none of these
/// before a first request is read: the connection stayed open, silent, for ever.
///
/// Two handlers share this state, on the connection's event loop: `BytesSide` before the
/// HTTP decoder (it sees bytes arrive, and whether the request line has ended), and
/// `RequestsSide` after it (it sees decoded requests, the decoder's errors and the responses
/// going out, and writes the error answers through the response encoder). A request asking
/// for an upgrade changes what flows past them: the upgrader removes the decoder (raw bytes
/// then reach `RequestsSide`), and after the 101 WebSocket frames go out through it; from
/// then on both only pass everything on.
package final class ConnectionGuard {
    enum Timer { case header, idle, linger }

    let limits: ConnectionLimits
    let registry: ConnectionRegistry
    private(set) var heads = 0, ends = 0
    /// A response head went out and its end not yet.
    private(set) var responding = false
    /// The request line being read: its bytes so far, and whether its end was seen.
    private(set) var requestLineBytes = 0
    private(set) var requestLineEnded = false
    package private(set) var rejected = false
    private var timer: (kind: Timer, task: Scheduled<Void>)?
    /// A request head asked for a protocol upgrade (WebSocket).
    private(set) var upgradeRequested = false
    /// The 101 went out: the connection speaks WebSocket now.
    private(set) var upgraded = false
    /// Set while `RequestsSide` is in the pipeline.
    var requests: ChannelHandlerContext?
    var bytes: ChannelHandlerContext?

    package init(limits: ConnectionLimits, registry: ConnectionRegistry) {
        self.limits = limits
        self.registry = registry
    }

    /// Between requests: every request read so far has ended.
    var betweenRequests: Bool { heads == ends }

    func start(_ kind: Timer, on context: ChannelHandlerContext) {
        timer?.task.cancel()
        let delay: TimeAmount
        switch kind {
        case .header: delay = limits.headerTimeout
        case .idle: delay = limits.idleTimeout
        case .linger: delay = limits.linger
        }
        let task = context.eventLoop.assumeIsolated().scheduleTask(in: delay) { [self] in fire(kind) }
        timer = (kind, task)
    }

    var timerKind: Timer? { timer?.kind }

    func stopTimer() {
        timer?.task.cancel()
        timer = nil
    }

    private func fire(_ kind: Timer) {
        timer = nil
        guard let context = requests else { return }
        switch kind {
        case .header:
            reject(.requestTimeout, "request_timeout", "the request's headers did not arrive within \(limits.headerTimeout.nanoseconds / 1_000_000_000) s")
        case .idle:
            registry.idleCloses.add(1, ordering: .relaxed)
            close(context)
        case .linger:
            close(context)
        }
    }

    /// Closes the connection. The WebSocket upgrader (before a first request) and
    /// Hummingbird's request loop (after it) are told that no more requests come first, so
    /// neither takes the close for an error worth logging.
    private func close(_ context: ChannelHandlerContext) {
        stopTimer()
        context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        context.close(promise: nil)
    }

    // MARK: what RequestsSide sees

    func headRead(_ head: HTTPRequestHead) {
        if head.headers.contains(name: "upgrade") { upgradeRequested = true }
        heads += 1
        requestLineEnded = true
        if timerKind == .header { stopTimer() }
    }

    func endRead() {
        ends += 1
        requestLineBytes = 0
        requestLineEnded = false
    }

    /// Bytes of a request not yet decoded arrived: measures its request line.
    func bytesRead(_ buffer: ByteBuffer) {
        guard !requestLineEnded else { return }
        if let newline = buffer.readableBytesView.firstIndex(of: 0x0A) {
            requestLineBytes += newline - buffer.readerIndex
            requestLineEnded = true
        } else {
            requestLineBytes += buffer.readableBytes
        }
    }

    func responseHeadWritten() { responding = true }

    func responseEndWritten(on context: ChannelHandlerContext) {
        responding = false
        if betweenRequests && !rejected { start(.idle, on: context) }
    }

    /// Answers `status` (unless a response is already going out, which is then cut), says
    /// `Connection: close`, stops reading requests, and closes after `linger`.
    func reject(_ status: HTTPResponseStatus, _ code: String, _ message: String) {
        guard !rejected, let context = requests else { return }
        rejected = true
        stopTimer()
        registry.refused(status: Int(status.code))
        guard !responding else {
            close(context)
            return
        }
        let body = Self.body(code, message)
        var headers = HTTPHeaders()
        headers.add(name: "Connection", value: "close")
        headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        headers.add(name: "Cache-Control", value: "no-store")
        context.write(NIOAny(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(body))), promise: nil)
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)), promise: written)
        written.futureResult.assumeIsolated().whenComplete { [self] _ in
            // Half-close: the client reads the answer and then the end; what it still sends is
            // dropped (BytesSide) until it closes or `linger` passes.
            context.close(mode: .output).whenFailure { _ in context.close(promise: nil) }
            start(.linger, on: context)
        }
    }

    static func body(_ code: String, _ message: String) -> ByteBuffer {
        // Codes and messages are ours (never the client's bytes), so no escaping is needed
        // beyond what JSON.encode does.
        let data = (try? JSON.encode(["error": code, "message": message])) ?? Array(#"{"error":"bad_request"}"#.utf8)
        return ByteBuffer(bytes: data)
    }

    /// The answer to a decoder error. The decoder counts the request target against the
    /// header field limit, so an overflow with a request line that long is a long URI.
    func status(for error: HTTPParserError) -> (HTTPResponseStatus, String, String) {
        switch error {
        case .headerOverflow where requestLineBytes >= limits.maxLine:
            return (.uriTooLong, "uri_too_long", "the request line is longer than \(limits.maxLine) bytes")
        case .headerOverflow:
            return (.requestHeaderFieldsTooLarge, "headers_too_large",
                    "a header field is over \(limits.maxLine) bytes, all of them over \(limits.maxHeaderBytes), or there are over \(limits.maxHeaderCount)")
        case .invalidMethod:
            return (.notImplemented, "not_implemented", "unknown method")
        default:
            return (.badRequest, "bad_request", "malformed request (\(error))")
        }
    }

    /// Answered without a 101: the decoder stayed, the request that asked is taken as read
    /// (its parts passed uncounted), and the guard counts requests again.
    func upgradeDeclined() {
        guard upgradeRequested else { return }
        upgradeRequested = false
        ends = heads
        requestLineBytes = 0
        requestLineEnded = false
    }

    /// After a 101: no more HTTP requests on this connection, and no timeouts (the WebSocket
    /// has its own pings).
    func switchedProtocols() {
        stopTimer()
        upgraded = true
    }
}

extension ConnectionGuard {
    /// Before the HTTP decoder: raw bytes in.
    package final class BytesSide: ChannelInboundHandler, RemovableChannelHandler {
        package typealias InboundIn = ByteBuffer
        package typealias InboundOut = ByteBuffer
        let guardian: ConnectionGuard

        package init(_ guardian: ConnectionGuard) { self.guardian = guardian }

        package func handlerAdded(context: ChannelHandlerContext) { guardian.bytes = context }
        package func handlerRemoved(context: ChannelHandlerContext) { guardian.bytes = nil }

        package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !guardian.rejected else { return } // read and dropped until the close
            if guardian.betweenRequests && !guardian.upgradeRequested {
                // A new request begins: its headers have `headerTimeout` from its first byte.
                if guardian.timerKind != .header, let r = guardian.requests { guardian.start(.header, on: r) }
                guardian.bytesRead(unwrapInboundIn(data))
            }
            context.fireChannelRead(data)
        }
    }

    /// After the HTTP decoder: requests in, responses out.
    package final class RequestsSide: ChannelDuplexHandler, RemovableChannelHandler {
        package typealias InboundIn = HTTPServerRequestPart
        package typealias InboundOut = HTTPServerRequestPart
        package typealias OutboundIn = HTTPServerResponsePart
        package typealias OutboundOut = HTTPServerResponsePart
        let guardian: ConnectionGuard

        package init(_ guardian: ConnectionGuard) { self.guardian = guardian }

        package func handlerAdded(context: ChannelHandlerContext) {
            guardian.requests = context
            // A connection that never sends a byte is a request whose headers never arrive.
            guardian.start(.header, on: context)
        }

        package func handlerRemoved(context: ChannelHandlerContext) { guardian.requests = nil }

        package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !guardian.rejected else { return }
            // Once an upgrade is asked for, the upgrader may take the decoder out: what comes
            // here may be raw bytes, not request parts.
            guard !guardian.upgradeRequested else {
                context.fireChannelRead(data)
                return
            }
            switch unwrapInboundIn(data) {
            case .head(let head): guardian.headRead(head)
            case .body: break
            case .end: guardian.endRead()
            }
            context.fireChannelRead(data)
        }

        package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            // After the 101, WebSocket frames.
            guard !guardian.upgraded else {
                context.write(data, promise: promise)
                return
            }
            switch unwrapOutboundIn(data) {
            case .head(let head):
                context.write(data, promise: promise)
                if head.status == .switchingProtocols {
                    guardian.switchedProtocols()
                } else {
                    guardian.upgradeDeclined()
                    guardian.responseHeadWritten()
                }
            case .body:
                context.write(data, promise: promise)
            case .end:
                context.write(data, promise: promise)
                guardian.responseEndWritten(on: context)
            }
        }

        package func errorCaught(context: ChannelHandlerContext, error: any Error) {
            guard let parse = error as? HTTPParserError else {
                context.fireErrorCaught(error)
                return
            }
            let (status, code, message) = guardian.status(for: parse)
            guardian.reject(status, code, message)
        }

        package func channelInactive(context: ChannelHandlerContext) {
            guardian.stopTimer()
            // Closed before a first request was read: the WebSocket upgrader still waits for
            // one and would log its removal as an error (for every browser's unused
            // pre-connection too); tell it no request comes.
            if guardian.heads == 0 { context.fireUserInboundEventTriggered(ChannelEvent.inputClosed) }
            context.fireChannelInactive()
        }
    }
}
