/// A top-level or child box found while walking ISO BMFF bytes.
public struct BoxHeader: Sendable, Equatable {
    public var type: String
    /// Offset of the box's first byte (its size field).
    public var offset: Int
    /// Size of the whole box, header included.
    public var size: Int
    public var headerSize: Int
    public var bodyOffset: Int { offset + headerSize }
    public var end: Int { offset + size }
}

/// Reads boxes and big-endian integers from a byte buffer.
public struct BoxReader {
    public let bytes: [UInt8]
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public func u8(_ at: Int) -> UInt8 { bytes[at] }
    public func u16(_ at: Int) -> UInt16 { UInt16(bytes[at]) << 8 | UInt16(bytes[at + 1]) }
    public func u32(_ at: Int) -> UInt32 {
        UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
    }
    public func u64(_ at: Int) -> UInt64 { UInt64(u32(at)) << 32 | UInt64(u32(at + 4)) }

    /// The box starting at `offset`, or nil if it is incomplete within `limit`.
    public func box(at offset: Int, limit: Int? = nil) -> BoxHeader? {
        let end = limit ?? bytes.count
        guard offset + 8 <= end else { return nil }
        var size = Int(u32(offset))
        var header = 8
        if size == 1 {
            guard offset + 16 <= end else { return nil }
            size = Int(u64(offset + 8)); header = 16
        } else if size == 0 {
            size = end - offset
        }
        guard size >= header, offset + size <= end else { return nil }
        let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
        return BoxHeader(type: type, offset: offset, size: size, headerSize: header)
    }

    /// Children of a container box (or of the range [start, end)).
    public func children(from start: Int, to end: Int) -> [BoxHeader] {
        var result: [BoxHeader] = []
        var at = start
        while let b = box(at: at, limit: end) { result.append(b); at = b.end }
        return result
    }

    /// The first box found by following a path of types, e.g. ["moov", "trak"].
    public func find(_ path: [String], from start: Int = 0, to end: Int? = nil) -> BoxHeader? {
        var range = (start, end ?? bytes.count)
        var found: BoxHeader?
        for (i, type) in path.enumerated() {
            guard let b = children(from: range.0, to: range.1).first(where: { $0.type == type }) else { return nil }
            found = b
            if i < path.count - 1 { range = (b.bodyOffset + Self.extraHeader(type), b.end) }
        }
        return found
    }

    /// track_ID of a tkhd box (version 0 or 1).
    public func trackID(tkhd b: BoxHeader) -> UInt32 { u32(b.bodyOffset + 4 + (u8(b.bodyOffset) == 1 ? 16 : 8)) }

    /// timescale of an mdhd box (version 0 or 1).
    public func timescale(mdhd b: BoxHeader) -> UInt32 { u32(b.bodyOffset + 4 + (u8(b.bodyOffset) == 1 ? 16 : 8)) }

    /// Bytes between a container's header and its first child (stsd's entry count, for instance).
    static func extraHeader(_ type: String) -> Int {
        switch type {
        case "stsd": return 8
        case "meta": return 4
        default: return 0
        }
    }
}
