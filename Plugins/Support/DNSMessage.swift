import Foundation

/// The little of DNS that mDNS discovery needs (RFC 1035, RFC 6762): a one-question query,
/// and the PTR, SRV and A records of an answer. Answers come from any device on the LAN, so
/// every read is bounds-checked, compression pointers must point backwards (no loops) and a
/// name is at most 255 bytes; anything malformed makes the whole datagram ignored.
public enum DNSMessage {
    public static let typeA: UInt16 = 1, typePTR: UInt16 = 12, typeTXT: UInt16 = 16, typeSRV: UInt16 = 33

    public enum RecordData: Equatable, Sendable {
        case ptr(String)
        case srv(port: UInt16, target: String)
        case a(String)
        case other
    }

    public struct Record: Equatable, Sendable {
        public var name: String
        public var type: UInt16
        public var data: RecordData

        public init(name: String, type: UInt16, data: RecordData) {
            self.name = name
            self.type = type
            self.data = data
        }
    }

    /// A query for `name` (dotted, "local." names included) of `type`, asking for a unicast
    /// answer (the QU bit), with `id` echoed by legacy-unicast responders.
    public static func query(id: UInt16, name: String, type: UInt16) -> [UInt8] {
        var out: [UInt8] = [UInt8(id >> 8), UInt8(id & 0xff), 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]
        for label in name.split(separator: ".") {
            let bytes = Array(label.utf8.prefix(63))
            out.append(UInt8(bytes.count))
            out += bytes
        }
        out += [0, UInt8(type >> 8), UInt8(type & 0xff), 0x80, 0x01]
        return out
    }

    /// The message's id and the records of its answer, authority and additional sections, or
    /// nil when it is not a well-formed response.
    public static func response(_ datagram: Data) -> (id: UInt16, records: [Record])? {
        let b = [UInt8](datagram.prefix(9000))
        guard b.count >= 12, b[2] & 0x80 != 0 else { return nil }
        func u16(_ i: Int) -> UInt16? { i >= 0 && i + 1 < b.count ? UInt16(b[i]) << 8 | UInt16(b[i + 1]) : nil }
        guard let id = u16(0), let qd = u16(4), let an = u16(6), let ns = u16(8), let ar = u16(10) else { return nil }
        var at = 12
        for _ in 0..<min(Int(qd), 16) {
            guard let (_, next) = name(b, at) else { return nil }
            at = next + 4
        }
        var records: [Record] = []
        for _ in 0..<min(Int(an) + Int(ns) + Int(ar), 64) {
            guard let (owner, next) = name(b, at), let type = u16(next), let length = u16(next + 8) else { return nil }
            let start = next + 10
            let end = start + Int(length)
            guard end <= b.count else { return nil }
            var data = RecordData.other
            switch type {
            case typePTR:
                guard let (target, _) = name(b, start) else { return nil }
                data = .ptr(target)
            case typeSRV:
                guard length >= 7, let port = u16(start + 4), let (target, _) = name(b, start + 6) else { return nil }
                data = .srv(port: port, target: target)
            case typeA where length == 4:
                data = .a("\(b[start]).\(b[start + 1]).\(b[start + 2]).\(b[start + 3])")
            default: break
            }
            records.append(Record(name: owner, type: type, data: data))
            at = end
        }
        return (id, records)
    }

    /// The name at `offset` (dotted, with a trailing dot; compare without case) and the offset after it
    /// in the message (after the first pointer when it is compressed).
    static func name(_ b: [UInt8], _ offset: Int) -> (String, Int)? {
        var labels: [String] = []
        var at = offset
        var after: Int?
        var total = 0
        var jumps = 0
        while true {
            guard at >= 0, at < b.count else { return nil }
            let len = Int(b[at])
            if len == 0 { break }
            if len & 0xc0 == 0xc0 {
                guard at + 1 < b.count else { return nil }
                let target = (len & 0x3f) << 8 | Int(b[at + 1])
                // Backwards only: a pointer forwards or to itself could loop.
                guard target < at, jumps < 32 else { return nil }
                if after == nil { after = at + 2 }
                at = target
                jumps += 1
                continue
            }
            guard len < 64, at + 1 + len <= b.count else { return nil }
            total += len + 1
            guard total <= 255 else { return nil }
            labels.append(String(decoding: b[(at + 1)..<(at + 1 + len)], as: UTF8.self))
            at += 1 + len
        }
        return (labels.joined(separator: ".") + ".", after ?? at + 1)
    }
}
