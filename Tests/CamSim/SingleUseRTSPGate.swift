import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What makes Tuya's allocated stream URLs single use, in front of a real RTSP server: each
/// issued URL carries a token (`?token=N`); the first connection that presents it within
/// `lifetime` seconds is passed through byte for byte, any later one (or a late or unknown
/// token) gets `RTSP/1.0 404 Not Found` and is closed.
public final class SingleUseRTSPGate: @unchecked Sendable {
    // @unchecked Sendable: tokens and counters are guarded by `lock`; sockets belong to threads.
    public let port: Int
    private let upstreamPort: Int
    private let upstreamPath: String
    private let lifetime: Double
    private let listener: Int32
    private let lock = NSLock()
    private var issued: [String: Date] = [:]
    private var next = 1
    private var stopped = false
    private var counters = (issued: 0, admitted: 0, refused: 0)

    /// `upstream`: the real server's URL (rtsp://127.0.0.1:PORT/PATH).
    public init(upstream: String, lifetime: Double = 30) throws {
        guard let u = URLComponents(string: upstream), let p = u.port else {
            throw SimulatorError("bad upstream \(upstream)")
        }
        upstreamPort = p
        upstreamPath = u.path
        self.lifetime = lifetime
        let (fd, bound) = try listenTCP(port: 0)
        port = bound
        listener = fd
        let t = Thread { [self] in acceptLoop() }
        t.name = "rtsp gate"
        t.start()
    }

    /// A fresh single-use URL.
    public func issue() -> String {
        let token = lock.withLock { () -> String in
            let t = "t\(next)x\(UInt32.random(in: 0...UInt32.max))"
            next += 1
            issued[t] = Date()
            counters.issued += 1
            return t
        }
        return "rtsp://127.0.0.1:\(port)\(upstreamPath)?token=\(token)"
    }

    public var stats: (issued: Int, admitted: Int, refused: Int) { lock.withLock { counters } }

    public func stop() {
        lock.withLock { stopped = true }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        while !lock.withLock({ stopped }) {
            let c = accept(listener, nil, nil)
            if c < 0 { continue }
            let t = Thread { [self] in admit(c) }
            t.name = "rtsp gate client"
            t.start()
        }
    }

    /// Reads the first request, checks its token, then pipes both ways until either side closes.
    private func admit(_ client: Int32) {
        var first = Data()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !first.contains(Data("\r\n".utf8)), first.count < 4096 {
            let n = recv(client, &chunk, chunk.count, 0)
            if n <= 0 {
                close(client)
                return
            }
            first.append(contentsOf: chunk[0..<n])
        }
        let line = String(decoding: first.prefix(while: { $0 != 13 && $0 != 10 }), as: UTF8.self)
        let token = line.split(separator: " ").dropFirst().first.flatMap { URLComponents(string: String($0)) }?
            .queryItems?.first { $0.name == "token" }?.value
        let ok = lock.withLock { () -> Bool in
            guard let token, let at = issued.removeValue(forKey: token), Date().timeIntervalSince(at) <= lifetime else {
                counters.refused += 1
                return false
            }
            counters.admitted += 1
            return true
        }
        guard ok else {
            let cseq =
                String(decoding: first, as: UTF8.self).split(separator: "\r\n").first {
                    $0.lowercased().hasPrefix("cseq:")
                } ?? "CSeq: 1"
            let answer = "RTSP/1.0 404 Not Found\r\n\(cseq)\r\nContent-Length: 0\r\n\r\n"
            _ = answer.withCString { send(client, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
            close(client)
            return
        }
        let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        a.sin_port = UInt16(upstreamPort).bigEndian
        let rc = withUnsafePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else {
            close(upstream)
            close(client)
            return
        }
        _ = first.withUnsafeBytes { send(upstream, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
        let back = Thread { Self.pipe(from: upstream, to: client) }
        back.name = "rtsp gate pipe"
        back.start()
        Self.pipe(from: client, to: upstream)
    }

    /// Copies until `from` closes, then shuts both down so the other pipe ends too.
    private static func pipe(from: Int32, to: Int32) {
        var buf = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = recv(from, &buf, buf.count, 0)
            if n <= 0 { break }
            var off = 0
            while off < n {
                let w = buf.withUnsafeBytes { send(to, $0.baseAddress! + off, n - off, Int32(MSG_NOSIGNAL)) }
                if w <= 0 { break }
                off += w
            }
            if off < n { break }
        }
        shutdown(from, Int32(SHUT_RDWR))
        shutdown(to, Int32(SHUT_RDWR))
        // Each side's descriptor is closed by the pipe that reads it, once both are down.
        close(from)
    }
}
