#if canImport(Glibc)
    import Glibc
#endif

/// A TCP connection read in large chunks: one recv brings in many RTP packets, where
/// libavformat's RTSP reader makes three small reads (six syscalls) per packet.
///
/// It can also be made over bytes in memory (`init(replaying:)`): the fuzzing targets and the
/// parser tests drive the real client through it with a scripted camera conversation.
final class BufferedSocket {
    private var fd: Int32 = -1
    /// Memory mode: the bytes a camera "sends", handed out `replayChunk` at a time.
    private var replay: [UInt8]?
    private var replayAt = 0
    private let replayChunk: Int
    /// Memory mode: what the client wrote.
    private(set) var written: [String] = []
    /// Memory mode: how many binary bytes the client wrote.
    private(set) var writtenBytes = 0
    private var buffer: [UInt8]
    /// Unread bytes are buffer[start..<end].
    private(set) var start = 0
    private(set) var end = 0
    private let interrupter: Interrupter
    private let timeout: Double

    /// Least time between two reads of the network, while `when` says so (asked only before a
    /// sleep); nil: read as soon as bytes are wanted. While bytes keep coming, a paced reader
    /// sleeps until then and takes everything that arrived in one read: one wake-up per period
    /// instead of one per burst of packets (a camera sends a frame as several bursts; thread
    /// switches were the largest item of a perf profile of 16 recording cameras: bench/README.md,
    /// bench/record --perf). A read that brought `paceLimit` bytes or more is followed at once,
    /// and a sleep is never longer than the time `paceLimit` bytes take to come at the rate the
    /// last read saw (`pacedWait`): the kernel holds about `paceLimit` at most, whatever the bit
    /// rate, and a heavy stream is read about as often as it would be unpaced.
    var pacing: (nanos: UInt64, when: () -> Bool)?
    static let paceLimit = 64 * 1024
    private var lastRead: UInt64 = 0
    private var lastReadBytes = 0
    /// The read before the last one: the last read's bytes came in between the two.
    private var readBefore: UInt64 = 0

    /// How long a paced reader sleeps before its next read: `interval`, or less when the last
    /// read's `bytes`, which came in over `span` nanoseconds, say `limit` bytes would arrive
    /// sooner. Unchecked arithmetic is safe: every input is bounded by the caller (bytes ≤ the
    /// buffer, span ≤ the time since the previous read).
    static func pacedWait(interval: UInt64, bytes: Int, span: UInt64, limit: Int = paceLimit) -> UInt64 {
        guard bytes > 0, span > 0 else { return interval }
        let (product, overflow) = UInt64(limit).multipliedReportingOverflow(by: span)
        if overflow { return interval }
        return min(interval, product / UInt64(bytes))
    }

    /// A connection whose peer sends `bytes` (in pieces of `chunk` bytes) and then closes.
    init(replaying bytes: [UInt8], chunk: Int = 1500, capacity: Int = 256 * 1024) {
        interrupter = Interrupter()
        timeout = 10
        replay = bytes
        replayChunk = max(chunk, 1)
        buffer = [UInt8](repeating: 0, count: capacity)
    }

    init(host: String, port: UInt16, timeout: Double, interrupter: Interrupter, capacity: Int = 256 * 1024) throws {
        self.interrupter = interrupter
        self.timeout = timeout
        replayChunk = 0
        buffer = [UInt8](repeating: 0, count: capacity)
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var res: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &res)
        guard rc == 0, let first = res else {
            throw MediaError(.open, "cannot resolve \(host): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(res) }
        var lastErr: Int32 = ECONNREFUSED
        var ai: UnsafeMutablePointer<addrinfo>? = first
        while let a = ai {
            let s = socket(
                a.pointee.ai_family,
                a.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
                a.pointee.ai_protocol)
            if s >= 0 {
                if connect(s, a.pointee.ai_addr, a.pointee.ai_addrlen) == 0 || errno == EINPROGRESS {
                    if try waitConnected(s) {
                        fd = s
                        break
                    }
                    lastErr = errno
                } else {
                    lastErr = errno
                }
                close(s)
            }
            ai = a.pointee.ai_next
        }
        guard fd >= 0 else {
            if lastErr == ECONNREFUSED {
                throw MediaError(.open, "connection refused (is the camera's RTSP port right?)", code: lastErr)
            }
            if lastErr == ETIMEDOUT {
                throw MediaError(.timeout, "no answer from \(host):\(port) (timed out)", code: lastErr)
            }
            throw MediaError(
                .open, "cannot connect to \(host):\(port): \(String(cString: strerror(lastErr)))", code: lastErr)
        }
        // Back to blocking, with a short receive timeout so stop() is noticed within 250 ms.
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        var tv = timeval(tv_sec: 0, tv_usec: 250_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        // A peer that stops reading fails a write after `timeout`, instead of blocking it until
        // TCP gives up (minutes).
        var stv = timeval(tv_sec: Int(max(timeout, 1)), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &stv, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { if fd >= 0 { close(fd) } }

    private func waitConnected(_ s: Int32) throws -> Bool {
        let deadline = Interrupter.now() + UInt64(timeout * 1e9)
        while true {
            if interrupter.isStopped { throw MediaError(.interrupted, "stopped") }
            var p = pollfd(fd: s, events: Int16(POLLOUT), revents: 0)
            let n = poll(&p, 1, 250)
            if n > 0 {
                var err: Int32 = 0
                var len = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len)
                errno = err
                return err == 0
            }
            if Interrupter.now() > deadline {
                errno = ETIMEDOUT
                return false
            }
        }
    }

    func write(_ text: String) throws {
        if replay != nil {
            written.append(text)
            return
        }
        try write(bytes: Array(text.utf8))
    }

    /// Sends all of `bytes` (interleaved RTP). In memory mode they are counted, not kept.
    func write(bytes: [UInt8]) throws {
        if replay != nil {
            writtenBytes += bytes.count
            return
        }
        var bytes = bytes
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeMutableBytes {
                send(fd, $0.baseAddress! + off, $0.count - off, Int32(MSG_NOSIGNAL))
            }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    throw MediaError(.timeout, "the camera stopped taking data (timed out)", code: errno)
                }
                throw MediaError(.read, "connection lost: \(String(cString: strerror(errno)))", code: errno)
            }
            off += n
        }
    }

    /// Reads more bytes into the buffer (compacting it first); throws on close, stop or
    /// timeout. `deadline` (monotonic ns) bounds a whole answer across many fills: a camera
    /// that sends one byte a second must not keep a request waiting forever; without one,
    /// each fill may wait `timeout` for the next bytes.
    func fill(deadline wholeAnswer: UInt64? = nil) throws {
        if start > 0 && (end == buffer.count || start == end) {
            if start < end {
                buffer.withUnsafeMutableBytes {
                    $0.baseAddress!.copyMemory(from: $0.baseAddress! + start, byteCount: end - start)
                }
            }
            end -= start
            start = 0
        }
        guard end < buffer.count else { throw MediaError(.corrupt, "RTSP message larger than \(buffer.count) bytes") }
        // Checked on every fill, not just on timeouts: a busy stream never times out.
        if interrupter.isStopped { throw MediaError(.interrupted, "stopped") }
        if replay != nil { return try fillFromReplay() }
        let silence = Interrupter.now() + UInt64(timeout * 1e9)
        let deadline = min(silence, wholeAnswer ?? .max)
        if let wholeAnswer, Interrupter.now() > wholeAnswer {
            throw MediaError(.timeout, "no complete answer within \(Int(timeout)) s (timed out)")
        }
        if let pacing, lastReadBytes < Self.paceLimit {
            let now = Interrupter.now()
            let due =
                lastRead
                &+ Self.pacedWait(interval: pacing.nanos, bytes: lastReadBytes, span: lastRead &- readBefore)
            if now < due, pacing.when() {
                var wait = timespec(tv_sec: 0, tv_nsec: Int(min(due - now, 999_999_999)))
                nanosleep(&wait, nil)
            }
        }
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + end, $0.count - end, 0) }
            if n > 0 {
                end += n
                if pacing != nil {
                    readBefore = lastRead
                    lastRead = Interrupter.now()
                    lastReadBytes = n
                }
                return
            }
            if n == 0 { throw MediaError(.read, "end of stream (camera closed the connection)") }
            if errno == EINTR { continue }
            guard errno == EAGAIN || errno == EWOULDBLOCK else {
                throw MediaError(.read, "connection lost: \(String(cString: strerror(errno)))", code: errno)
            }
            if interrupter.isStopped { throw MediaError(.interrupted, "stopped") }
            if Interrupter.now() > deadline {
                if deadline < silence {
                    throw MediaError(.timeout, "no complete answer within \(Int(timeout)) s (timed out)")
                }
                throw MediaError(.timeout, "no data for \(Int(timeout)) s (timed out)")
            }
        }
    }

    private func fillFromReplay() throws {
        guard let replay, replayAt < replay.count else {
            throw MediaError(.read, "end of stream (camera closed the connection)")
        }
        let n = min(replayChunk, replay.count - replayAt, buffer.count - end)
        buffer.replaceSubrange(end..<(end + n), with: replay[replayAt..<(replayAt + n)])
        replayAt += n
        end += n
    }

    var available: Int { end - start }
    var timeoutSeconds: Double { timeout }

    /// Ensures `n` unread bytes are buffered (`n` at most the buffer's capacity).
    func require(_ n: Int, deadline: UInt64? = nil) throws {
        guard n >= 0, n <= buffer.count else {
            throw MediaError(.corrupt, "RTSP message of \(n) bytes (at most \(buffer.count))")
        }
        while end - start < n { try fill(deadline: deadline) }
    }

    func peek(_ i: Int) -> UInt8 { buffer[start + i] }

    func consume(_ n: Int) { start += n }

    /// Calls `body` with `n` buffered bytes starting `offset` bytes into the unread data.
    func withBytes<R>(offset: Int = 0, count n: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try buffer.withUnsafeBytes {
            try body(UnsafeRawBufferPointer(rebasing: $0[(start + offset)..<(start + offset + n)]))
        }
    }

    /// Index (relative to start) just past the first "\r\n\r\n", if buffered, looking from
    /// `from` (relative to start): a caller that fills and looks again resumes where it
    /// stopped, so a header dribbled in byte by byte costs linear time, not quadratic.
    func headerEnd(from: Int = 0) -> Int? {
        var i = start + max(from, 0)
        while i + 3 < end {
            if buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
                return i + 4 - start
            }
            i += 1
        }
        return nil
    }
}
