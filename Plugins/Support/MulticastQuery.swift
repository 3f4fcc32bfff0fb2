import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One question sent to a multicast group from every IPv4 interface that can multicast, and
/// the datagrams that come back to our socket within a few seconds (WS-Discovery probes, mDNS
/// legacy-unicast queries). Answers arrive unicast to the port we sent from, so nothing here
/// joins a group or competes for a well-known port with avahi or another NVR.
public enum MulticastQuery {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Sends `message` to `group`:`port` and hands every datagram received for `seconds` to
    /// `answer` with the sender's IPv4 address; `answer` returns false to stop early. With
    /// `overhear`, what devices send to the group itself meanwhile (WS-Discovery Hello and
    /// Bye) is handed over too, on a shared bind of the group's port.
    public static func ask(
        group: String, port: UInt16, message: [UInt8], seconds: Double, overhear: Bool = false,
        answer: (Data, String) -> Bool
    ) throws {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else {
            throw Failure(description: "cannot open a UDP socket: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var any = sockaddr_in()
        any.sin_family = sa_family_t(AF_INET)
        guard
            withUnsafePointer(
                to: &any,
                {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }) == 0
        else {
            throw Failure(description: "cannot bind a UDP socket: \(String(cString: strerror(errno)))")
        }
        var to = sockaddr_in()
        to.sin_family = sa_family_t(AF_INET)
        to.sin_port = port.bigEndian
        guard inet_pton(AF_INET, group, &to.sin_addr) == 1 else {
            throw Failure(description: "'\(group)' is not an IPv4 group")
        }
        var sent = 0
        for addr in multicastInterfaces() {
            var a = addr
            guard setsockopt(fd, Int32(IPPROTO_IP), IP_MULTICAST_IF, &a, socklen_t(MemoryLayout<in_addr>.size)) == 0
            else { continue }
            let n = withUnsafePointer(to: &to) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, message, message.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            if n == message.count { sent += 1 }
        }
        guard sent > 0 else {
            throw Failure(description: "no network interface could send to \(group) (no multicast route)")
        }
        var sockets = [fd]
        // Overhearing is a bonus: a port we cannot share only means announcements are missed.
        let listener = overhear ? groupListener(group: to.sin_addr, port: port) : nil
        if let listener { sockets.append(listener) }
        defer { if let listener { close(listener) } }
        receive(on: sockets, seconds: seconds, answer: answer)
    }

    /// Hands every datagram that reaches one of `sockets` within `seconds` to `answer` with
    /// the sender's IPv4 address; `answer` returns false to stop early.
    public static func receive(on sockets: [Int32], seconds: Double, answer: (Data, String) -> Bool) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let deadline = Date(timeIntervalSinceNow: min(max(seconds, 0), 60))
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return }
            var fds = sockets.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            guard poll(&fds, nfds_t(fds.count), Int32(left * 1000) + 1) > 0 else { continue }
            for p in fds where p.revents & Int16(POLLIN) != 0 {
                var from = sockaddr_in()
                var fromLength = socklen_t(MemoryLayout<sockaddr_in>.size)
                let n = withUnsafeMutablePointer(to: &from) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        recvfrom(p.fd, &buffer, buffer.count, 0, $0, &fromLength)
                    }
                }
                guard n > 0 else { continue }
                if !answer(Data(buffer[0..<n]), text(from.sin_addr)) { return }
            }
        }
    }

    /// A UDP socket bound to `address`:`port` (any address by default) that other programs
    /// listening there (Home Assistant, tinytuya, avahi) may share: SO_REUSEADDR and SO_REUSEPORT.
    public static func sharedSocket(port: UInt16, address: in_addr = in_addr(s_addr: 0)) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else {
            throw Failure(description: "cannot open a UDP socket: \(String(cString: strerror(errno)))")
        }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size))
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = port.bigEndian
        a.sin_addr = address
        guard
            withUnsafePointer(
                to: &a,
                {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }) == 0
        else {
            let why = String(cString: strerror(errno))
            close(fd)
            throw Failure(description: "cannot listen on UDP \(port): \(why)")
        }
        return fd
    }

    /// A socket on `port` (shared with other listeners) that has joined `group` on every
    /// multicast interface, or nil.
    static func groupListener(group: in_addr, port: UInt16) -> Int32? {
        guard let fd = try? sharedSocket(port: port, address: group) else { return nil }
        var joined = 0
        for i in multicastInterfaces() {
            var m = ip_mreq(imr_multiaddr: group, imr_interface: i)
            if setsockopt(fd, Int32(IPPROTO_IP), IP_ADD_MEMBERSHIP, &m, socklen_t(MemoryLayout<ip_mreq>.size)) == 0 {
                joined += 1
            }
        }
        guard joined > 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// IPv4 addresses of the interfaces that are up and can multicast (loopback only when it
    /// has been given the multicast flag).
    public static func multicastInterfaces() -> [in_addr] {
        interfaces().filter { $0.multicast }.map(\.address)
    }

    /// Every IPv4 address of an interface that is up, with its netmask.
    public static func interfaces() -> [(address: in_addr, netmask: in_addr, multicast: Bool)] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var out: [(address: in_addr, netmask: in_addr, multicast: Bool)] = []
        var p: UnsafeMutablePointer<ifaddrs>? = first
        while let cur = p {
            defer { p = cur.pointee.ifa_next }
            // IFF_UP and IFF_MULTICAST (linux/if.h).
            let flags = cur.pointee.ifa_flags
            guard let addr = cur.pointee.ifa_addr, addr.pointee.sa_family == sa_family_t(AF_INET), flags & 0x1 != 0
            else { continue }
            let a = addr.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            let m =
                cur.pointee.ifa_netmask.map {
                    $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                } ?? in_addr()
            if !out.contains(where: { $0.address.s_addr == a.s_addr }) { out.append((a, m, flags & 0x1000 != 0)) }
        }
        return out
    }

    /// Dotted text of an IPv4 address.
    public static func text(_ a: in_addr) -> String {
        let b = UInt32(bigEndian: a.s_addr)
        return "\(b >> 24).\(b >> 16 & 0xff).\(b >> 8 & 0xff).\(b & 0xff)"
    }
}
