import Foundation
import PluginSupport

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
                    host.split(separator: ".").count == 4
                else { continue }
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
            func list(_ name: String) -> [String] {
                (m.child(name)?.value ?? "").split(whereSeparator: \.isWhitespace).prefix(64).map(String.init)
            }
            return Match(endpoint: endpoint, xaddrs: list("XAddrs"), scopes: list("Scopes"), types: list("Types"))
        }
    }

    /// What a device says to the group unasked: Hello when it joins a network, Bye when it
    /// leaves.
    public enum Announcement: Sendable, Equatable {
        case hello(Match)
        case bye(endpoint: String)
    }

    /// The announcement in one datagram, if it is a Hello from a video transmitter (printers
    /// and PCs say Hello too) or any Bye.
    public static func announcement(in datagram: Data) -> Announcement? {
        guard let doc = try? XMLReader.parse(datagram), let body = doc.child("Body") else { return nil }
        if let bye = body.child("Bye") {
            guard let endpoint = bye.first("EndpointReference")?.text("Address"), !endpoint.isEmpty else { return nil }
            return .bye(endpoint: endpoint)
        }
        guard let hello = body.child("Hello"), let endpoint = hello.first("EndpointReference")?.text("Address"),
            !endpoint.isEmpty
        else { return nil }
        func list(_ name: String) -> [String] {
            (hello.child(name)?.value ?? "").split(whereSeparator: \.isWhitespace).prefix(64).map(String.init)
        }
        let types = list("Types")
        guard types.contains(where: { $0.split(separator: ":").last == "NetworkVideoTransmitter" }) else { return nil }
        return .hello(Match(endpoint: endpoint, xaddrs: list("XAddrs"), scopes: list("Scopes"), types: types))
    }

    /// Probes every multicast-capable IPv4 interface and collects answers for `seconds`, with
    /// the cameras that say Hello meanwhile; a camera that says Bye is left out.
    public static func probe(seconds: Double) throws -> [Match] {
        let id = UUID().uuidString.lowercased()
        var found: [String: Match] = [:]
        var gone: Set<String> = []
        do {
            try MulticastQuery.ask(
                group: group, port: port, message: Array(probeMessage(id: id).utf8), seconds: seconds, overhear: true
            ) { datagram, _ in
                switch announcement(in: datagram) {
                case .hello(let m)?:
                    gone.remove(m.endpoint)
                    found[m.endpoint] = m
                case .bye(let endpoint)?:
                    gone.insert(endpoint)
                    found[endpoint] = nil
                case nil:
                    for m in matches(in: datagram, messageID: id)
                    where found[m.endpoint] == nil && !gone.contains(m.endpoint) { found[m.endpoint] = m }
                }
                return found.count < 256 && gone.count < 4096
            }
        } catch let e as MulticastQuery.Failure {
            throw ONVIFError(.unreachable, "WS-Discovery: \(e.description)")
        }
        return found.values.sorted { $0.endpoint < $1.endpoint }
    }
}
