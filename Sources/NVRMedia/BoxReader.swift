/// Reads boxes and big-endian integers from a byte buffer.
///
/// The bytes come from files and cameras: every read is bounds-checked, and a read that
/// falls (partly) outside the buffer yields 0, so a box too short for its fields parses as
/// zeros rather than trapping; callers check sizes where a zero would mislead.
public struct BoxReader {
    public let bytes: [UInt8]
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    @inline(__always)
    public func u8(_ at: Int) -> UInt8 { at >= 0 && at < bytes.count ? bytes[at] : 0 }
    public func u16(_ at: Int) -> UInt16 {
        guard at >= 0, at <= bytes.count - 2 else { return 0 }
        return UInt16(bytes[at]) << 8 | UInt16(bytes[at + 1])
    }
    public func u32(_ at: Int) -> UInt32 {
        guard at >= 0, at <= bytes.count - 4 else { return 0 }
        return UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8
            | UInt32(bytes[at + 3])
    }
    public func u64(_ at: Int) -> UInt64 {
        guard at >= 0, at <= bytes.count - 8 else { return 0 }
        return UInt64(u32(at)) << 32 | UInt64(u32(at + 4))
    }

    /// The box starting at `offset`, or nil if it is incomplete within `limit`.
    public func box(at offset: Int, limit: Int? = nil) -> BoxHeader? {
        let end = min(limit ?? bytes.count, bytes.count)
        guard offset >= 0, offset <= end - 8 else { return nil }
        var size = Int(u32(offset))
        var header = 8
        if size == 1 {
            guard offset <= end - 16, let large = Int(exactly: u64(offset + 8)) else { return nil }
            size = large
            header = 16
        } else if size == 0 {
            size = end - offset
        }
        guard size >= header, size <= end - offset else { return nil }
        let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
        return BoxHeader(type: type, offset: offset, size: size, headerSize: header)
    }

    /// Children of a container box (or of the range [start, end)).
    public func children(from start: Int, to end: Int) -> [BoxHeader] {
        var result: [BoxHeader] = []
        var at = start
        while let b = box(at: at, limit: end) {
            result.append(b)
            at = b.end
        }
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

    /// track_ID of a tkhd box (version 0 or 1); 0 if the box is too short to have one.
    public func trackID(tkhd b: BoxHeader) -> UInt32 { field(b, 4 + (u8(b.bodyOffset) == 1 ? 16 : 8)) }

    /// timescale of an mdhd box (version 0 or 1); 0 if the box is too short to have one.
    public func timescale(mdhd b: BoxHeader) -> UInt32 { field(b, 4 + (u8(b.bodyOffset) == 1 ? 16 : 8)) }

    /// The 32-bit field `offset` bytes into a box's body, or 0 if the box ends before it.
    public func field(_ b: BoxHeader, _ offset: Int) -> UInt32 {
        guard b.bodyOffset + offset + 4 <= b.end else { return 0 }
        return u32(b.bodyOffset + offset)
    }

    /// Bytes between a container's header and its first child (stsd's entry count, for instance).
    package static func extraHeader(_ type: String) -> Int {
        switch type {
        case "stsd": return 8
        case "meta": return 4
        default: return 0
        }
    }
}
