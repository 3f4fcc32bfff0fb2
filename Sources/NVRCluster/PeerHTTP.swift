import Foundation
import NIOSSL

/// An HTTP/1.1 GET to another node (`Connection: close`), blocking, with one deadline for
/// connecting, sending and reading the whole reply, and a limit on the reply's size: what the
/// nodes use to ask each other about PostgreSQL and to fetch footage. `http://` over a socket
/// here; `https://` over TLS (PeerTLS) to a peer presenting one of `pinned` (PeerTrust: the
/// certificates the node published), and nil without them. Everything the peer sends is checked: a status line,
/// headers that end, a Content-Length body (no chunked encoding) no larger than the limit.
enum PeerHTTP {
    struct Reply {
        var status: Int
        /// Header names lowercased.
        var headers: [String: String]
        var body: [UInt8]
    }

    static func get(
        _ baseURL: String, path: String, headers extra: [String: String] = [:], timeout: Double, limit: Int,
        pinned: [NIOSSLCertificate]? = nil
    ) -> Reply? {
        guard let url = URL(string: baseURL), url.scheme == "http" || url.scheme == "https", let host = url.host,
            !host.isEmpty
        else { return nil }
        let secure = url.scheme == "https"
        let port = url.port ?? (secure ? 443 : 80)
        guard (1...65535).contains(port) else { return nil }
        let deadline = monotonic() + timeout
        let hostHeader = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        var request = "GET \(path) HTTP/1.1\r\nHost: \(hostHeader)\r\nConnection: close\r\n"
        for (k, v) in extra.sorted(by: { $0.key < $1.key }) { request += "\(k): \(v)\r\n" }
        request += "\r\n"
        if secure {
            guard let pinned,
                let reply = PeerTLS.exchange(
                    host: host, port: port, request: Array(request.utf8), pinned: pinned, deadline: deadline,
                    limit: limit + (16 << 10))
            else { return nil }
            // A TLS peer may close without close_notify: only a Content-Length says the body is whole.
            return parse(reply, limit: limit, needsLength: true)
        }
        guard let fd = connect(host: host, port: port, deadline: deadline) else { return nil }
        defer { close(fd) }
        guard send(fd, Array(request.utf8), deadline: deadline) else { return nil }
        guard let reply = receive(fd, limit: limit + (16 << 10), deadline: deadline) else { return nil }
        return parse(reply, limit: limit)
    }

    /// A whole reply: status line, headers, and a body of exactly Content-Length bytes (or, with
    /// none, what came until the peer closed).
    static func parse(_ reply: [UInt8], limit: Int, needsLength: Bool = false) -> Reply? {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let split = reply.firstRange(of: separator) else { return nil }
        let head = String(decoding: reply[..<split.lowerBound], as: UTF8.self)
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        guard !lines.isEmpty else { return nil }
        let statusLine = lines.removeFirst()
        let words = statusLine.split(separator: " ", maxSplits: 2)
        guard words.count >= 2, words[0].hasPrefix("HTTP/1."), let status = Int(words[1]), (100...599).contains(status)
        else { return nil }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        if let te = headers["transfer-encoding"], te.lowercased() != "identity" { return nil }
        let body = Array(reply[split.upperBound...])
        if let cl = headers["content-length"] {
            guard let n = Int(cl), n >= 0, n <= limit, body.count == n else { return nil }
        } else if needsLength {
            return nil
        }
        guard body.count <= limit else { return nil }
        return Reply(status: status, headers: headers, body: body)
    }

    private static func connect(host: String, port: Int, deadline: Double) -> Int32? {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else { return nil }
        defer { freeaddrinfo(list) }
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let ai = next {
            next = ai.pointee.ai_next
            let fd = socket(
                ai.pointee.ai_family,
                ai.pointee.ai_socktype | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { continue }
            if Glibc.connect(fd, ai.pointee.ai_addr, ai.pointee.ai_addrlen) == 0
                || (errno == EINPROGRESS && wait(fd, for: Int16(POLLOUT), deadline: deadline) && socketError(fd) == 0)
            {
                return fd
            }
            close(fd)
        }
        return nil
    }

    private static func send(_ fd: Int32, _ bytes: [UInt8], deadline: Double) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                sent += n
            } else if n < 0 && (errno == EAGAIN || errno == EINTR) {
                guard wait(fd, for: Int16(POLLOUT), deadline: deadline) else { return false }
            } else {
                return false
            }
        }
        return true
    }

    /// Everything until the peer closes (Connection: close), at most `limit` bytes.
    private static func receive(_ fd: Int32, limit: Int, deadline: Double) -> [UInt8]? {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while out.count <= limit {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                out += buffer[..<n]
            } else if n == 0 {
                return out
            } else if errno == EAGAIN || errno == EINTR {
                guard wait(fd, for: Int16(POLLIN), deadline: deadline) else { return nil }
            } else {
                return nil
            }
        }
        return nil
    }

    private static func wait(_ fd: Int32, for events: Int16, deadline: Double) -> Bool {
        let left = deadline - monotonic()
        guard left > 0 else { return false }
        var p = pollfd(fd: fd, events: events, revents: 0)
        return poll(&p, 1, Int32(min(left, 3600) * 1000) + 1) == 1
    }

    private static func socketError(_ fd: Int32) -> Int32 {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 ? error : -1
    }

    static func monotonic() -> Double { NodeLeases.monotonic() }
}
