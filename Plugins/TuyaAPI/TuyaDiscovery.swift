import Crypto
import Foundation

/// How Tuya devices announce themselves on the LAN: every few seconds a UDP broadcast to port
/// 6666 (protocol 3.1: the JSON in clear) or 6667 (3.3: the JSON sealed with AES-ECB under a
/// key every device shares, MD5 of "yGAdlopoPVldABfn"), in a 55AA frame (command 0x13, a
/// return code, CRC). The JSON: {"ip":"192.168.1.40","gwId":"bf12…","active":2,"ability":0,
/// "mode":0,"encrypt":true,"productKey":"…","version":"3.3"}. (3.5 devices send 6699 frames
/// with AES-GCM to port 7000: not read here.)
public enum TuyaDiscovery {
    public static let ports: [UInt16] = [6666, 6667]
    public static let command: UInt32 = 0x13
    /// The well-known broadcast key (tinytuya's `udpkey`).
    public static let udpKey = Data(Insecure.MD5.hash(data: Data("yGAdlopoPVldABfn".utf8)))

    public struct Announcement: Sendable, Equatable {
        public var ip: String
        public var deviceID: String
        public var productKey: String?
        public var version: String?
        public init(ip: String, deviceID: String, productKey: String? = nil, version: String? = nil) {
            self.ip = ip
            self.deviceID = deviceID
            self.productKey = productKey
            self.version = version
        }
    }

    /// The datagram a 3.3 device broadcasts to port 6667.
    public static func datagram(_ a: Announcement) throws -> Data {
        var o: [String: Any] = ["ip": a.ip, "gwId": a.deviceID, "active": 2, "ability": 0, "mode": 0, "encrypt": true]
        if let p = a.productKey { o["productKey"] = p }
        if let v = a.version { o["version"] = v }
        let json = try JSONSerialization.data(withJSONObject: o, options: [.sortedKeys])
        let sealed = try TuyaCipher(key: udpKey).encrypt(json)
        return TuyaLAN.encode(
            TuyaLAN.Frame(seq: 0, command: command, retcode: 0, payload: sealed), version: .v33, integrityKey: Data())
    }

    /// What a received datagram announces, or nil (not a Tuya announcement, damaged, forged).
    public static func announcement(in datagram: Data) -> Announcement? {
        guard datagram.count <= 4096,
            let (frame, _) = try? TuyaLAN.decode(datagram, version: .v33, integrityKey: Data(), fromDevice: true),
            frame.command == command || frame.command == 0x12
        else { return nil }
        let json: Data
        if frame.payload.first == UInt8(ascii: "{") {
            json = frame.payload
        } else {
            guard let plain = try? TuyaCipher(key: udpKey).decrypt(frame.payload) else { return nil }
            json = plain
        }
        guard let o = try? JSONSerialization.jsonObject(with: json) as? [String: Any],
            let ip = o["ip"] as? String, ip.count <= 15,
            ip.split(separator: ".", omittingEmptySubsequences: false).count == 4,
            ip.split(separator: ".").allSatisfy({ $0.count <= 3 && UInt8($0) != nil }),
            let id = o["gwId"] as? String, !id.isEmpty, id.count <= 64,
            id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
        else { return nil }
        return Announcement(
            ip: ip, deviceID: id, productKey: (o["productKey"] as? String).map { String($0.prefix(64)) },
            version: (o["version"] as? String).map { String($0.prefix(8)) })
    }
}
