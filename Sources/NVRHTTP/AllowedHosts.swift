import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The names and addresses the NVR answers to in `Host`. A web page anywhere can make the
/// user's browser send requests to 127.0.0.1 or to the NVR's LAN address; with DNS
/// rebinding it can even read the answers, under a name of its own. So a request whose Host
/// is not one of the machine's own names or addresses (or a configured one) is refused.
struct AllowedHosts: Sendable {
    private let names: Set<String>

    init(bindHost: String, extra: [String]) {
        var n: Set<String> = ["localhost", "127.0.0.1", "::1", "localhost.localdomain"]
        if !["0.0.0.0", "::", ""].contains(bindHost) { n.insert(bindHost.lowercased()) }
        var buf = [CChar](repeating: 0, count: 256)
        if gethostname(&buf, buf.count) == 0 {
            let h = String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).lowercased()
            if !h.isEmpty {
                n.insert(h)
                n.insert(h + ".local")
            }
        }
        n.formUnion(Self.interfaceAddresses())
        n.formUnion(extra.map { $0.lowercased() })
        names = n
    }

    /// Every address of every interface of this machine.
    static func interfaceAddresses() -> [String] {
        var out: [String] = []
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return out }
        defer { freeifaddrs(list) }
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let i = cursor {
            cursor = i.pointee.ifa_next
            guard let addr = i.pointee.ifa_addr else { continue }
            var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            let len =
                addr.pointee.sa_family == sa_family_t(AF_INET6)
                ? socklen_t(MemoryLayout<sockaddr_in6>.size) : socklen_t(MemoryLayout<sockaddr_in>.size)
            guard addr.pointee.sa_family == sa_family_t(AF_INET) || addr.pointee.sa_family == sa_family_t(AF_INET6),
                getnameinfo(addr, len, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0
            else { continue }
            var s = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if let pct = s.firstIndex(of: "%") { s = String(s[..<pct]) }  // fe80::1%eth0
            out.append(s.lowercased())
        }
        return out
    }

    /// Whether a Host header (name or address, with or without a port) is one of ours.
    func allows(_ header: String?) -> Bool {
        guard let h = header?.trimmingCharacters(in: .whitespaces).lowercased(), !h.isEmpty else { return false }
        var host = h
        if h.hasPrefix("["), let close = h.firstIndex(of: "]") {  // [::1]:8080
            host = String(h[h.index(after: h.startIndex)..<close])
        } else if h.filter({ $0 == ":" }).count == 1, let colon = h.firstIndex(of: ":") {
            host = String(h[..<colon])
        }
        if host.hasSuffix(".") { host.removeLast() }
        return names.contains(host)
    }
}
