import Foundation

/// Asks another node whether it reaches PostgreSQL now (`GET /api/node` at its advertised URL,
/// plain HTTP), with a deadline for the whole exchange. A blocking call for the lease keeper's
/// peer thread: nil when there is no answer (no URL, an https:// one, a refused or silent
/// connection, a malformed reply), which the keeper treats as "cannot tell".
enum PeerQuestion {
    /// What the other node said.
    struct Answer: Equatable {
        var node: String
        var reachesIndex: Bool
    }

    static func ask(_ advertiseURL: String, timeout: Double) -> Answer? {
        guard let url = URL(string: advertiseURL), url.scheme == "http", let host = url.host, !host.isEmpty
        else { return nil }
        let port = url.port ?? 80
        guard (1...65535).contains(port) else { return nil }
        let deadline = monotonic() + timeout
        guard let fd = connect(host: host, port: port, deadline: deadline) else { return nil }
        defer { close(fd) }
        let hostHeader = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        let request = "GET /api/node HTTP/1.1\r\nHost: \(hostHeader)\r\nConnection: close\r\n\r\n"
        guard send(fd, Array(request.utf8), deadline: deadline) else { return nil }
        guard let reply = receive(fd, limit: 16 << 10, deadline: deadline) else { return nil }
        return parse(reply)
    }

    /// The answer in an HTTP reply: 200 with `{"node": …, "index": "reachable"|"unreachable"}`.
    static func parse(_ reply: [UInt8]) -> Answer? {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let split = reply.firstRange(of: separator) else { return nil }
        let head = String(decoding: reply[..<split.lowerBound], as: UTF8.self)
        guard let status = head.split(separator: "\r\n").first, status.hasPrefix("HTTP/1."),
            status.split(separator: " ").dropFirst().first == "200"
        else { return nil }
        let body = Data(reply[split.upperBound...])
        struct Body: Decodable {
            var node: String
            var index: String
        }
        guard let b = try? JSONDecoder().decode(Body.self, from: body),
            b.index == "reachable" || b.index == "unreachable"
        else { return nil }
        return Answer(node: b.node, reachesIndex: b.index == "reachable")
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
            let fd = socket(ai.pointee.ai_family, ai.pointee.ai_socktype | Int32(SOCK_NONBLOCK.rawValue), 0)
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
        return poll(&p, 1, Int32(left * 1000) + 1) == 1
    }

    private static func socketError(_ fd: Int32) -> Int32 {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 ? error : -1
    }

    static func monotonic() -> Double { NodeLeases.monotonic() }
}
