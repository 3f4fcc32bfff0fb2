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
    /// Requests read (heads, ends) and answered (responses ended).
    private(set) var heads = 0, ends = 0, answered = 0
    /// A response head went out and its end not yet.
    private(set) var responding = false
    /// Bytes of a request not yet decoded have arrived.
    private var pendingBytes = false
    /// The request line being read: its bytes so far, and whether its end was seen.
    private(set) var requestLineBytes = 0
    private(set) var requestLineEnded = false
    /// What the client sends is dropped: an error answer is written, or owed.
    package private(set) var rejected = false
    /// An error answer waiting for the responses still owed to go out first.
    private var refusal: (status: HTTPResponseStatus, code: String, message: String)?
    private var timer: (kind: Timer, task: Scheduled<Void>)?
    /// The first request asked for an upgrade: the upgrader may take the decoder out.
    private(set) var upgradeRequested = false
    /// The 101 went out: the connection speaks WebSocket now.
    private(set) var upgraded = false
    /// A request the decoder takes as an upgrade (Upgrade with Connection: upgrade, or
    /// CONNECT) was answered without a 101: the decoder parses nothing after it, so the
    /// connection is closed after its response (which says `Connection: close`).
    private(set) var closeAfterResponse = false
    /// Set while `RequestsSide` is in the pipeline.
    var requests: ChannelHandlerContext?

    package init(limits: ConnectionLimits, registry: ConnectionRegistry) {
        self.limits = limits
        self.registry = registry
    }

    /// Every request read has ended; bytes now belong to a request not yet decoded.
    var betweenRequests: Bool { heads == ends }
    /// Every request read has been answered, and no answer is going out.
    var nothingOwed: Bool { answered >= heads && !responding }

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
            reject(
                .requestTimeout, "request_timeout",
                "the request's headers did not arrive within \(limits.headerTimeout.nanoseconds / 1_000_000_000) s")
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

    /// After the last answer: half-close, so the client reads the answer and then the end;
    /// what it still sends is dropped until it closes or `linger` passes.
    private func finish(_ context: ChannelHandlerContext) {
        rejected = true
        context.close(mode: .output).whenFailure { _ in context.close(promise: nil) }
        start(.linger, on: context)
    }

    // MARK: what BytesSide sees

    /// Bytes of a request not yet decoded arrived (between requests): its headers have
    /// `headerTimeout` from its first byte, counted once every earlier request is answered.
    func bytesRead(_ buffer: ByteBuffer) {
        pendingBytes = true
        if nothingOwed && timerKind != .header, let r = requests { start(.header, on: r) }
        guard !requestLineEnded else { return }
        if let newline = buffer.readableBytesView.firstIndex(of: 0x0A) {
            requestLineBytes += newline - buffer.readerIndex
            requestLineEnded = true
        } else {
            requestLineBytes += buffer.readableBytes
        }
    }

    // MARK: what RequestsSide sees

    /// A request head was read. Returns the head to pass on when it must change (nil: as it
    /// is): one asking to upgrade to anything but a WebSocket (`h2c` from `curl --http2`)
    /// loses its `Upgrade`, as RFC 9110 lets a server ignore it — the WebSocket upgrader takes
    /// any `Upgrade` header for an attempt, whatever `Connection` says, and answered such a
    /// request with nothing at all.
    func headRead(_ head: HTTPRequestHead) -> HTTPRequestHead? {
        var changed: HTTPRequestHead?
        // The HTTP parser's own idea of an upgrade: it parses nothing after one.
        if head.method == .CONNECT
            || (head.headers.contains(name: "upgrade")
                && head.headers[canonicalForm: "connection"].contains { $0.lowercased() == "upgrade" })
        {
            closeAfterResponse = true
        }
        if head.headers.contains(name: "upgrade") {
            if head.headers[canonicalForm: "upgrade"].contains(where: { $0.lowercased() == "websocket" }) {
                // Only the first request meets the upgrader (it leaves the pipeline after it),
                // and it may switch whatever `Connection` says.
                if heads == 0 { upgradeRequested = true }
            } else {
                var h = head
                h.headers.remove(name: "upgrade")
                let connection = h.headers[canonicalForm: "connection"].filter { $0.lowercased() != "upgrade" }
                h.headers.remove(name: "connection")
                for token in connection { h.headers.add(name: "connection", value: String(token)) }
                changed = h
            }
        }
        heads += 1
        pendingBytes = false
        requestLineEnded = true
        if timerKind == .header || timerKind == .idle { stopTimer() }
        return changed
    }

    func endRead() {
        ends += 1
        requestLineBytes = 0
        requestLineEnded = false
    }

    func responseHeadWritten() {
        responding = true
        if upgradeRequested {
            // Declined: the decoder stayed; the request that asked passed uncounted.
            upgradeRequested = false
            ends = heads
        }
    }

    func responseEndWritten(on context: ChannelHandlerContext) {
        responding = false
        answered += 1
        guard nothingOwed else { return }
        if let r = refusal {
            refusal = nil
            writeRefusal(r.status, r.code, r.message, on: context)
        } else if rejected {
            return
        } else if closeAfterResponse {
            finish(context)
        } else if betweenRequests {
            // A pipelined request's first bytes may be here already: its header time runs.
            start(pendingBytes ? .header : .idle, on: context)
        }
    }

    /// Refuses what the client sends from now on, and answers `status` with `Connection:
    /// close` — after the responses still owed to earlier requests — then closes.
    func reject(_ status: HTTPResponseStatus, _ code: String, _ message: String) {
        guard !rejected, let context = requests else { return }
        rejected = true
        stopTimer()
        registry.refused(status: Int(status.code))
        if nothingOwed {
            writeRefusal(status, code, message, on: context)
        } else {
            refusal = (status, code, message)
        }
    }

    private func writeRefusal(
        _ status: HTTPResponseStatus, _ code: String, _ message: String, on context: ChannelHandlerContext
    ) {
        let body = Self.body(code, message)
        var headers = HTTPHeaders()
        headers.add(name: "Connection", value: "close")
        headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        headers.add(name: "Cache-Control", value: "no-store")
        context.write(
            NIOAny(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))),
            promise: nil)
        context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(body))), promise: nil)
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)), promise: written)
        written.futureResult.assumeIsolated().whenComplete { [self] _ in finish(context) }
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
            return (
                .requestHeaderFieldsTooLarge, "headers_too_large",
                "a header field is over \(limits.maxLine) bytes, all of them over \(limits.maxHeaderBytes), or there are over \(limits.maxHeaderCount)"
            )
        case .invalidMethod:
            return (.notImplemented, "not_implemented", "unknown method")
        default:
            return (.badRequest, "bad_request", "malformed request (\(error))")
        }
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

        package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !guardian.rejected else { return }  // read and dropped until the close
            if guardian.betweenRequests && !guardian.upgradeRequested && !guardian.upgraded {
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
            guard !guardian.upgradeRequested && !guardian.upgraded else {
                context.fireChannelRead(data)
                return
            }
            switch unwrapInboundIn(data) {
            case .head(let head):
                if let changed = guardian.headRead(head) {
                    context.fireChannelRead(wrapInboundOut(.head(changed)))
                    return
                }
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
            case .head(var head):
                if head.status == .switchingProtocols {
                    context.write(data, promise: promise)
                    guardian.switchedProtocols()
                    return
                }
                if guardian.closeAfterResponse && head.status.code >= 200 {
                    head.headers.replaceOrAdd(name: "Connection", value: "close")
                    context.write(wrapOutboundOut(.head(head)), promise: promise)
                } else {
                    context.write(data, promise: promise)
                }
                guardian.responseHeadWritten()
            case .body:
                context.write(data, promise: promise)
            case .end:
                context.write(data, promise: promise)
                guardian.responseEndWritten(on: context)
            }
        }

        package func errorCaught(context: ChannelHandlerContext, error: any Error) {
            // A client gone mid-request makes the decoder's end-of-input step fail: no one to answer.
            guard context.channel.isActive else { return }
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
