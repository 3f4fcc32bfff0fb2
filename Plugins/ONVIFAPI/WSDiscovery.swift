import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// WS-Discovery (2005/04, as ONVIF uses it): a Probe for NetworkVideoTransmitters sent to
/// 239.255.255.250:3702 from every IPv4 interface that can multicast, and the ProbeMatches
/// that come back to us within the given time.
public enum WSDiscovery {
    /// One device that answered.
    public struct Match: Sendable, Equatable {
        /// urn:uuid:… — the device's own id.
        public var endpoint: String
        /// Its device service URLs.
        public var xaddrs: [String]
        public var scopes: [String]
        public var types: [String]

        /// The value of an `onvif://www.onvif.org/<kind>/<value>` scope (name, hardware, location).
        public func scope(_ kind: String) -> String? {
            let prefix = "onvif://www.onvif.org/\(kind)/"
            guard let s = scopes.first(where: { $0.lowercased().hasPrefix(prefix.lowercased()) }) else { return nil }
            let v = String(s.dropFirst(prefix.count))
            return (v.removingPercentEncoding ?? v).isEmpty ? nil : (v.removingPercentEncoding ?? v)
        }

        /// host or host:port of the first http device service on an IPv4 address.
        public var address: String? {
            for x in xaddrs {
                guard let u = URLComponents(string: x), u.scheme == "http", let host = u.host, !host.isEmpty,
                      host.split(separator: ".").count == 4 else { continue }
                return u.port.map { $0 == 80 ? host : "\(host):\($0)" } ?? host
            }
            return nil
        }
    }

    static let group = "239.255.255.250"
    static let port: UInt16 = 3702

    public static func probeMessage(id: String) -> String {
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><s:Envelope xmlns:s=\"http://www.w3.org/2003/05/soap-envelope\" "
            + "xmlns:a=\"http://schemas.xmlsoap.org/ws/2004/08/addressing\" xmlns:d=\"http://schemas.xmlsoap.org/ws/2005/04/discovery\" "
            + "xmlns:dn=\"http://www.onvif.org/ver10/network/wsdl\"><s:Header>"
            + "<a:Action s:mustUnderstand=\"1\">http://schemas.xmlsoap.org/ws/2005/04/discovery/Probe</a:Action>"
            + "<a:MessageID>urn:uuid:\(id)</a:MessageID><a:ReplyTo><a:Address>http://schemas.xmlsoap.org/ws/2004/08/addressing/role/anonymous"
            + "</a:Address></a:ReplyTo><a:To s:mustUnderstand=\"1\">urn:schemas-xmlsoap-org:ws:2005:04:discovery</a:To></s:Header>"
            + "<s:Body><d:Probe><d:Types>dn:NetworkVideoTransmitter</d:Types></d:Probe></s:Body></s:Envelope>"
    }

    /// The matches in one datagram (none if it is not a ProbeMatches answering `messageID`).
    public static func matches(in datagram: Data, messageID: String) -> [Match] {
        guard let doc = try? XMLReader.parse(datagram), let body = doc.child("Body") else { return [] }
        if let relates = doc.child("Header")?.text("RelatesTo"), relates != "urn:uuid:\(messageID)" { return [] }
        return body.all("ProbeMatch").prefix(64).compactMap { m in
            guard let endpoint = m.first("EndpointReference")?.text("Address"), !endpoint.isEmpty else { return nil }
            func list(_ name: String) -> [String] { (m.child(name)?.value ?? "").split(whereSeparator: \.isWhitespace).prefix(64).map(String.init) }
            return Match(endpoint: endpoint, xaddrs: list("XAddrs"), scopes: list("Scopes"), types: list("Types"))
        }
    }

    /// Probes every multicast-capable IPv4 interface and collects answers for `seconds`.
    public static func probe(seconds: Double) throws -> [Match] {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw ONVIFError(.unreachable, "cannot open a UDP socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var any = sockaddr_in()
        any.sin_family = sa_family_t(AF_INET)
        guard withUnsafePointer(to: &any, { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }) == 0 else {
            throw ONVIFError(.unreachable, "cannot bind a UDP socket: \(String(cString: strerror(errno)))")
        }
        let id = UUID().uuidString.lowercased()
        let message = Array(probeMessage(id: id).utf8)
        var to = sockaddr_in()
        to.sin_family = sa_family_t(AF_INET)
        to.sin_port = port.bigEndian
        inet_pton(AF_INET, group, &to.sin_addr)
        var sent = 0
        for addr in multicastInterfaces() {
            var a = addr
            guard setsockopt(fd, Int32(IPPROTO_IP), IP_MULTICAST_IF, &a, socklen_t(MemoryLayout<in_addr>.size)) == 0 else { continue }
            let n = withUnsafePointer(to: &to) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, message, message.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            if n == message.count { sent += 1 }
        }
        guard sent > 0 else { throw ONVIFError(.unreachable, "no network interface could send a WS-Discovery probe (no multicast route)") }
        var found: [String: Match] = [:]
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let deadline = Date(timeIntervalSinceNow: seconds)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { break }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, Int32(min(left, 60) * 1000) + 1) > 0 else { continue }
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 0 else { continue }
            for m in matches(in: Data(buffer[0..<n]), messageID: id) where found[m.endpoint] == nil { found[m.endpoint] = m }
            if found.count >= 256 { break }
        }
        return found.values.sorted { $0.endpoint < $1.endpoint }
    }

    /// IPv4 addresses of the interfaces that are up and can multicast (loopback only when it
    /// has been given the multicast flag).
    static func multicastInterfaces() -> [in_addr] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var out: [in_addr] = []
        var p: UnsafeMutablePointer<ifaddrs>? = first
        while let cur = p {
            defer { p = cur.pointee.ifa_next }
            // IFF_UP and IFF_MULTICAST (linux/if.h).
            let flags = cur.pointee.ifa_flags
            guard let addr = cur.pointee.ifa_addr, addr.pointee.sa_family == sa_family_t(AF_INET),
                  flags & 0x1 != 0, flags & 0x1000 != 0 else { continue }
            let a = addr.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            if !out.contains(where: { $0.s_addr == a.s_addr }) { out.append(a) }
        }
        return out
    }
}
