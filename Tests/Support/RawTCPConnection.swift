import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP connection to a loopback server that sends exactly the bytes a test gives it, as a
/// hostile or broken client would: no HTTP library in between. Non-blocking, so many can be
/// kept open by one test without a thread each.
public final class RawTCPConnection {
    public private(set) var fd: Int32
    /// Everything read so far.
    public private(set) var received: [UInt8] = []
    /// The server closed (or reset) the connection.
    public private(set) var closed = false
    public private(set) var closedAt: Date?

    /// Connects to 127.0.0.1:`port`, from `source` (any 127.x.y.z address; the kernel picks
    /// the port).
    public init(port: Int, source: String? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw FixtureError("socket: \(String(cString: strerror(errno)))") }
        if let source {
            var s = sockaddr_in()
            s.sin_family = sa_family_t(AF_INET)
            s.sin_addr.s_addr = inet_addr(source)
            let r = withUnsafePointer(to: &s) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard r == 0 else {
                Glibc.close(fd)
                throw FixtureError("bind \(source): \(String(cString: strerror(errno)))")
            }
        }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = in_port_t(UInt16(port).bigEndian)
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        let r = withUnsafePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard r == 0 else {
            Glibc.close(fd)
            throw FixtureError("connect: \(String(cString: strerror(errno)))")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    deinit { close() }

    public func close() {
        if fd >= 0 {
            Glibc.close(fd)
            fd = -1
        }
    }

    /// Sends what the socket takes now; false when the server has closed or reset it.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        guard fd >= 0 else { return false }
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                offset += n
                continue
            }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                // The server stopped reading (it answered already, or it is slow): wait a little.
                var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                if Glibc.poll(&p, 1, 200) <= 0 { return false }
                continue
            }
            return false
        }
        return true
    }

    public func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Reads whatever has arrived, without waiting; notes an end of stream or a reset.
    public func poll() {
        guard fd >= 0, !closed else { return }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n > 0 {
                received += buffer[0..<n]
                continue
            }
            if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                closed = true
                closedAt = Date()
            }
            return
        }
    }

    /// Reads until the server closes or `seconds` pass; true when it closed.
    public func readUntilClosed(seconds: Double) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            poll()
            if closed { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        poll()
        return closed
    }

    /// The status line and headers of the first response read, and its body.
    public var response: (status: Int, headers: [String: String], body: [UInt8])? {
        guard let end = received.firstRange(of: [13, 10, 13, 10]) else { return nil }
        let head = String(decoding: received[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        guard let first = head.first?.split(separator: " "), first.count >= 2, let status = Int(first[1]) else {
            return nil
        }
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        return (status, headers, Array(received[end.upperBound...]))
    }
}
