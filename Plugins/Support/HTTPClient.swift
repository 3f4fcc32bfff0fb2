import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A small blocking HTTP/1.1 client for cameras' plain-HTTP control APIs (GoPro, OSC).
///
/// One connection per request (`Connection: close`): camera web servers are simple and often
/// mishandle pipelining, and a fresh connection makes every failure local to one call. Every
/// connect, write and read has a deadline; bodies can be streamed in chunks with cancel.
public struct HTTPClient: Sendable {
    public struct Response: Sendable {
        public var status: Int
        public var headers: [String: String]  // lower-cased names
        public var body: Data
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Seconds any connect, write or read may take before the request fails.
    public var timeout: Double

    public init(timeout: Double = 5) { self.timeout = timeout }

    /// GET `url`, the whole body in memory (for JSON answers; capped at `maxBody`).
    public func get(_ url: String, headers: [String: String] = [:], maxBody: Int = 8 << 20) throws -> Response {
        try fetch(url, headers: headers, maxBody: maxBody)
    }

    /// Any method (OSC POSTs JSON), the whole answer in memory, capped at `maxBody`.
    public func fetch(
        _ url: String, method: String = "GET", headers: [String: String] = [:], body: Data? = nil,
        maxBody: Int = 8 << 20
    ) throws -> Response {
        var collected = Data()
        // The whole answer within a few timeouts: one byte per timeout must not hold the
        // calling thread (a camera's stop, a discovery) for hours.
        let deadline = Date(timeIntervalSinceNow: max(timeout, 1) * 4)
        var response = try request(url, method: method, headers: headers, body: body, deadline: deadline) { chunk in
            collected.append(contentsOf: chunk)
            return collected.count <= maxBody
        }
        guard collected.count <= maxBody else { throw HTTPError("\(url): answer larger than \(maxBody) bytes") }
        response.body = collected
        return response
    }

    /// GET `url`, handing the body to `sink` chunk by chunk; the sink returns false to cancel
    /// (the result's status is then still the server's). The returned body is empty.
    public func request(
        _ url: String, method: String = "GET", headers: [String: String] = [:], body: Data? = nil,
        deadline: Date? = nil,
        sink: (UnsafeRawBufferPointer) -> Bool, onHead: (Response) -> Void = { _ in }
    ) throws -> Response {
        guard let u = URLComponents(string: url), u.scheme?.lowercased() == "http", let host = u.host, !host.isEmpty
        else {
            throw HTTPError("'\(url)' is not an http:// URL")
        }
        let port = u.port ?? 80
        var target = u.percentEncodedPath.isEmpty ? "/" : u.percentEncodedPath
        if let q = u.percentEncodedQuery { target += "?" + q }
        let conn = try TCPConnection(host: host, port: port, timeout: timeout)
        defer { conn.close() }
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\nUser-Agent: nvr\r\n"
        for (k, v) in headers { head += "\(k): \(v)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        try conn.write(Data(head.utf8) + (body ?? Data()))
        return try readResponse(conn, method: method, deadline: deadline, sink: sink, onHead: onHead)
    }

    /// Reads one answer from `conn`: status line, headers, then the body (Content-Length,
    /// chunked, or to the end) handed to `sink`, all of it by `deadline` when one is given.
    package func readResponse(
        _ conn: TCPConnection, method: String, deadline: Date? = nil, sink: (UnsafeRawBufferPointer) -> Bool,
        onHead: (Response) -> Void = { _ in }
    ) throws -> Response {
        let host = conn.peer
        // The whole head within a few timeouts: a camera dribbling header bytes must not hold
        // this thread (and the card work queued behind it) for hours.
        let headDeadline = min(Date(timeIntervalSinceNow: max(timeout, 1) * 3), deadline ?? .distantFuture)
        let statusLine = try conn.readLine(deadline: headDeadline)
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw HTTPError("\(host) did not answer HTTP (\(statusLine.prefix(60)))")
        }
        var headers: [String: String] = [:]
        var lines = 0
        while true {
            let line = try conn.readLine(deadline: headDeadline)
            if line.isEmpty { break }
            lines += 1
            guard lines <= 100 else { throw HTTPError("\(host) sent more than 100 header lines") }
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        let response = Response(status: status, headers: headers, body: Data())
        onHead(response)
        if method == "HEAD" || status == 204 || status == 304 { return response }
        if headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
            while true {
                let sizeLine = try conn.readLine(deadline: deadline)
                guard
                    let size = Int(
                        sizeLine.split(separator: ";").first.map(String.init)?.trimmingCharacters(in: .whitespaces)
                            ?? "", radix: 16),
                    size >= 0
                else {
                    throw HTTPError("\(host): bad chunk header '\(sizeLine.prefix(20))'")
                }
                if size == 0 { break }
                if try !conn.read(exactly: size, deadline: deadline, sink: sink) { return response }
                _ = try conn.readLine(deadline: deadline)
            }
        } else if let len = headers["content-length"].flatMap({ Int($0) }) {
            guard len >= 0 else { throw HTTPError("\(host): Content-Length \(len)") }
            _ = try conn.read(exactly: len, deadline: deadline, sink: sink)
        } else {
            _ = try conn.readToEnd(deadline: deadline, sink: sink)
        }
        return response
    }
}

extension HTTPClient {
    /// Streams bytes [offset, offset + length) of `url` (length -1: to the end) to `sink` with
    /// one Range request, in chunks; the sink returns false to cancel. A server that ignores
    /// Range (200 with the whole file) still works: the bytes before `offset` are skipped.
    /// Returns false when the sink cancelled; throws on HTTP errors (status in the message).
    public func readRange(
        _ url: String, offset: Int64, length: Int64, headers extra: [String: String] = [:],
        sink: (UnsafeRawBufferPointer) -> Bool
    ) throws -> Bool {
        var headers = extra
        if offset > 0 || length >= 0 {
            headers["Range"] = "bytes=\(offset)-" + (length >= 0 ? String(offset + length - 1) : "")
        }
        var skip: Int64 = 0
        var remaining = length  // -1: to the end
        var cancelled = false
        var status = 0
        let r = try request(
            url, headers: headers,
            sink: { chunk in
                guard status == 206 || status == 200 else { return false }
                var c = chunk
                if skip > 0 {
                    let n = Int(min(skip, Int64(c.count)))
                    skip -= Int64(n)
                    c = UnsafeRawBufferPointer(rebasing: c[n...])
                    if c.isEmpty { return true }
                }
                if remaining >= 0 {
                    c = UnsafeRawBufferPointer(rebasing: c[..<Int(min(remaining, Int64(c.count)))])
                    remaining -= Int64(c.count)
                }
                if !sink(c) {
                    cancelled = true
                    return false
                }
                return remaining != 0
            },
            onHead: { head in
                status = head.status
                if head.status == 200 { skip = offset }
            })
        guard r.status == 206 || r.status == 200 else { throw HTTPError("HTTP \(r.status)") }
        if !cancelled, remaining > 0 { throw HTTPError("the file ended \(remaining) bytes early") }
        return !cancelled
    }
}

public struct HTTPError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ m: String) { description = m }
}

/// One TCP connection with deadlines on every operation (HTTP here; Tuya's LAN protocol too).
public final class TCPConnection {
    let fd: Int32
    let timeout: Double
    public let peer: String
    private var buffer = [UInt8](repeating: 0, count: 64 << 10)
    private var start = 0, end = 0

    /// A connection over an already connected socket (the fuzzing target's socketpair); it is
    /// closed with the connection.
    package init(connected fd: Int32, peer: String, timeout: Double) {
        self.fd = fd
        self.peer = peer
        self.timeout = timeout
    }

    public init(host: String, port: Int, timeout: Double) throws {
        self.timeout = timeout
        peer = "\(host):\(port)"
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else {
            throw HTTPError("cannot resolve \(host): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let ai = cursor {
            cursor = ai.pointee.ai_next
            let s = socket(
                ai.pointee.ai_family,
                ai.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
                ai.pointee.ai_protocol)
            if s < 0 {
                lastError = String(cString: strerror(errno))
                continue
            }
            if connect(s, ai.pointee.ai_addr, ai.pointee.ai_addrlen) == 0 || errno == EINPROGRESS {
                if Self.wait(s, events: Int16(POLLOUT), timeout: timeout) {
                    var err: Int32 = 0
                    var len = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len)
                    if err == 0 {
                        fd = s
                        return
                    }
                    lastError = String(cString: strerror(err))
                } else {
                    lastError = "no answer within \(Self.seconds(timeout))"
                }
            } else {
                lastError = String(cString: strerror(errno))
            }
            Glibc.close(s)
        }
        throw HTTPError("cannot connect to \(host):\(port): \(lastError)")
    }

    static func seconds(_ t: Double) -> String { t == t.rounded() ? "\(Int(t)) s" : "\(t) s" }

    static func wait(_ fd: Int32, events: Int16, timeout: Double) -> Bool {
        var p = pollfd(fd: fd, events: events, revents: 0)
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            let ms = Int32(min(max(0, deadline.timeIntervalSinceNow * 1000), 3_600_000))
            let rc = poll(&p, 1, ms)
            if rc > 0 { return true }
            if rc == 0 { return false }
            if errno != EINTR { return false }
        }
    }

    public func close() { Glibc.close(fd) }

    /// Whatever bytes arrive within `wait` seconds (after those already buffered): nil when
    /// none came, empty at end of stream.
    public func receive(wait: Double) throws -> Data? {
        if start < end {
            defer { start = end }
            return Data(buffer[start..<end])
        }
        guard Self.wait(fd, events: Int16(POLLIN), timeout: wait) else { return nil }
        start = 0
        end = 0
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
        if n > 0 { return Data(buffer[0..<n]) }
        if n == 0 { return Data() }
        if errno == EAGAIN || errno == EINTR { return nil }
        throw HTTPError("\(peer): receive failed: \(String(cString: strerror(errno)))")
    }

    public func write(_ data: Data) throws {
        try data.withUnsafeBytes { raw in
            var off = 0
            while off < raw.count {
                let n = send(fd, raw.baseAddress! + off, raw.count - off, Int32(MSG_NOSIGNAL))
                if n > 0 {
                    off += n
                    continue
                }
                if n < 0 && (errno == EAGAIN || errno == EINTR) {
                    guard Self.wait(fd, events: Int16(POLLOUT), timeout: timeout) else {
                        throw HTTPError("\(peer): send timed out")
                    }
                    continue
                }
                throw HTTPError("\(peer): send failed: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Refills the buffer; false at end of stream. Past `deadline` (if any) it throws.
    private func fill(deadline: Date? = nil) throws -> Bool {
        if start == end {
            start = 0
            end = 0
        }
        if end == buffer.count {
            buffer.replaceSubrange(0..<(end - start), with: buffer[start..<end])
            end -= start
            start = 0
        }
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + end, $0.count - end, 0) }
            if n > 0 {
                end += n
                return true
            }
            if n == 0 { return false }
            if errno == EAGAIN || errno == EINTR {
                let left = deadline.map { $0.timeIntervalSinceNow } ?? timeout
                guard left > 0, Self.wait(fd, events: Int16(POLLIN), timeout: min(timeout, left)) else {
                    throw HTTPError("\(peer): no answer within \(Self.seconds(timeout))")
                }
                continue
            }
            throw HTTPError("\(peer): receive failed: \(String(cString: strerror(errno)))")
        }
    }

    func readLine(deadline: Date? = nil) throws -> String {
        while true {
            if let nl = buffer[start..<end].firstIndex(of: 10) {
                var lineEnd = nl
                if lineEnd > start && buffer[lineEnd - 1] == 13 { lineEnd -= 1 }
                let line = String(decoding: buffer[start..<lineEnd], as: UTF8.self)
                start = nl + 1
                return line
            }
            if end - start > 16 << 10 { throw HTTPError("\(peer): header line too long") }
            guard try fill(deadline: deadline) else { throw HTTPError("\(peer): connection closed mid-answer") }
        }
    }

    /// Hands exactly `count` bytes to `sink`; false when the sink cancelled.
    func read(exactly count: Int, deadline: Date? = nil, sink: (UnsafeRawBufferPointer) -> Bool) throws -> Bool {
        var left = count
        while left > 0 {
            if start == end {
                guard try fill(deadline: deadline) else {
                    throw HTTPError("\(peer): connection closed with \(left) bytes missing")
                }
            }
            let n = min(left, end - start)
            let ok = buffer.withUnsafeBytes { sink(UnsafeRawBufferPointer(rebasing: $0[start..<(start + n)])) }
            start += n
            left -= n
            if !ok { return false }
        }
        return true
    }

    func readToEnd(deadline: Date? = nil, sink: (UnsafeRawBufferPointer) -> Bool) throws -> Bool {
        while true {
            if start < end {
                let ok = buffer.withUnsafeBytes { sink(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
                start = end
                if !ok { return false }
            }
            guard try fill(deadline: deadline) else { return true }
        }
    }
}
