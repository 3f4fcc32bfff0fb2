import NVRMQTT
import NVRStorage
import TOMLKit

extension NVRConfig {
    /// The keys of [mqtt].
    static let mqttKeys: Set<String> = [
        "host", "port", "user", "password", "tls", "tls_ca", "client_id", "topic_prefix", "protocol", "commands",
    ]

    /// [mqtt]: the broker and what the NVR says there (design/mqtt.md); nil without the section.
    static func parseMQTT(_ table: TOMLTable?, source: String) throws -> MQTTBridge.Options? {
        guard let t = table else { return nil }
        func string(_ key: String) throws -> String? {
            guard let v = t[key] else { return nil }
            guard let s = v.string, !s.isEmpty else {
                throw ConfigError("\(source): mqtt.\(key) must be a non-empty string")
            }
            return s
        }
        func bool(_ key: String) throws -> Bool? {
            guard let v = t[key] else { return nil }
            guard let b = v.bool else { throw ConfigError("\(source): mqtt.\(key) must be true or false") }
            return b
        }
        guard let host = try string("host") else {
            throw ConfigError("\(source): [mqtt] needs host (the broker's name or address)")
        }
        let tls = try bool("tls") ?? false
        var port = tls ? 8883 : 1883
        if let v = t["port"] {
            guard let n = v.int, (1...65_535).contains(n) else {
                throw ConfigError("\(source): mqtt.port must be 1…65535")
            }
            port = n
        }
        var connection = MQTTConnection.Options(host: host, port: port)
        connection.user = try string("user")
        connection.password = try string("password")
        connection.tls = tls
        connection.tlsCA = try string("tls_ca")
        if connection.tlsCA != nil && !tls { throw ConfigError("\(source): mqtt.tls_ca needs mqtt.tls = true") }
        if let id = try string("client_id") {
            guard id.count <= 64, id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_".contains($0)) })
            else {
                throw ConfigError("\(source): mqtt.client_id must be letters, digits, '-' and '_' (up to 64)")
            }
            connection.clientID = id
        }
        switch try string("protocol") ?? "3.1.1" {
        case "3.1.1": connection.protocolVersion = 4
        case "5": connection.protocolVersion = 5
        default: throw ConfigError("\(source): mqtt.protocol must be \"3.1.1\" or \"5\"")
        }
        var options = MQTTBridge.Options(connection: connection)
        if let prefix = try string("topic_prefix") {
            guard !prefix.contains(where: { "+#".contains($0) }), !prefix.hasPrefix("/"), !prefix.hasSuffix("/") else {
                throw ConfigError(
                    "\(source): mqtt.topic_prefix must be a topic without + or # and without a leading or trailing /")
            }
            options.prefix = prefix
        }
        options.commands = try bool("commands") ?? false
        return options
    }
}
