import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Receives the simulator encoder's MPEG-TS on a loopback port and forwards each datagram to
/// the client that started the stream, while `forwarding` says so: the camera's radio.
final class UDPRelay: @unchecked Sendable {
    // @unchecked Sendable: `target`/`forwarding`/counters are guarded by `lock`; the socket
    // is only read by the relay thread and closed by stop().
    private let fd: Int32
    let port: Int
    private let lock = NSLock()
    private var target: sockaddr_in?
    private var forwardingOn = false
    private var stopped = false
    private(set) var firstDatagram: Date?
    private var sent = 0

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        self.fd = fd
        guard fd >= 0 else { throw SimulatorError("udp socket: \(String(cString: strerror(errno)))") }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        // Any address, not loopback: the encoder sends here over loopback, and the stream goes
        // on to the NVR's address, which a socket bound to 127.0.0.1 cannot send to.
        a.sin_addr.s_addr = INADDR_ANY
        a.sin_port = 0
        var tv = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var size: Int32 = 4 << 20
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        let rc = withUnsafePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else { throw SimulatorError("udp bind: \(String(cString: strerror(errno)))") }
        var bound = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        port = Int(UInt16(bigEndian: bound.sin_port))
        let t = Thread { [self] in loop() }
        t.name = "camsim udp relay"
        t.start()
    }

    /// Sends to `host:port` from now on (while forwarding is on).
    func send(to host: String, port: Int) {
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_addr.s_addr = inet_addr(host)
        a.sin_port = in_port_t(UInt16(port).bigEndian)
        lock.withLock { target = a }
    }

    var forwarding: Bool {
        get { lock.withLock { forwardingOn } }
        set { lock.withLock { forwardingOn = newValue } }
    }

    var datagramsSent: Int { lock.withLock { sent } }

    func stop() {
        lock.withLock { stopped = true }
    }

    private func loop() {
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            let (to, on, stop) = lock.withLock { (target, forwardingOn, stopped) }
            if stop {
                close(fd)
                return
            }
            guard n > 0 else { continue }
            lock.withLock { if firstDatagram == nil { firstDatagram = Date() } }
            guard on, var dest = to else { continue }
            let ok = buf.withUnsafeBytes { b in
                withUnsafePointer(to: &dest) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(fd, b.baseAddress, n, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
            if ok > 0 { lock.withLock { sent += 1 } }
        }
    }
}

public struct SimulatorError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ m: String) { description = m }
}
