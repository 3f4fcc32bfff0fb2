import Foundation

/// The compact per-frame index stored with each segment: about 2–3 bytes a frame.
///
/// Layout: a version byte (1), a flags byte (bit 0: composition offsets present), then per
/// frame `varint(zigzag(duration − previous duration) << 1 | key)`,
/// `varint(zigzag(size − previous size of the same kind))` (key and non-key frames keep
/// separate "previous" sizes, since they differ by an order of magnitude), and, with
/// bit 0, `varint(zigzag(composition offset))`. The same encoding serves audio.
public enum FrameIndex {
    public struct Frame: Sendable, Equatable {
        public var duration: UInt32
        public var size: UInt32
        public var isKey: Bool
        public var compositionOffset: Int32
        public init(duration: UInt32, size: UInt32, isKey: Bool, compositionOffset: Int32 = 0) {
            self.duration = duration
            self.size = size
            self.isKey = isKey
            self.compositionOffset = compositionOffset
        }
    }

    public static func encode(_ frames: [Frame]) -> Data {
        var out = Data()
        out.reserveCapacity(2 + frames.count * 3)
        let hasCTS = frames.contains { $0.compositionOffset != 0 }
        out.append(1)
        out.append(hasCTS ? 1 : 0)
        var prevDuration: Int64 = 0
        var prevSize: (key: Int64, other: Int64) = (0, 0)
        for f in frames {
            let d = Int64(f.duration)
            putVarint(zigzag(d - prevDuration) << 1 | (f.isKey ? 1 : 0), &out)
            prevDuration = d
            let s = Int64(f.size)
            if f.isKey {
                putVarint(zigzag(s - prevSize.key), &out)
                prevSize.key = s
            } else {
                putVarint(zigzag(s - prevSize.other), &out)
                prevSize.other = s
            }
            if hasCTS { putVarint(zigzag(Int64(f.compositionOffset)), &out) }
        }
        return out
    }

    public static func decode(_ data: Data) throws -> [Frame] {
        let bytes = [UInt8](data)
        guard bytes.count >= 2, bytes[0] == 1 else { throw IndexError("frame index: unknown version") }
        let hasCTS = bytes[1] & 1 != 0
        var i = 2
        var frames: [Frame] = []
        var prevDuration: Int64 = 0
        var prevSize: (key: Int64, other: Int64) = (0, 0)
        while i < bytes.count {
            let a = try getVarint(bytes, &i)
            let isKey = a & 1 != 0
            // Blobs are read back from disk: a corrupt one must throw, not overflow.
            let (d, o1) = prevDuration.addingReportingOverflow(unzigzag(a >> 1))
            prevDuration = d
            let ds = unzigzag(try getVarint(bytes, &i))
            let (s, o2) = (isKey ? prevSize.key : prevSize.other).addingReportingOverflow(ds)
            guard !o1, !o2 else { throw IndexError("frame index: corrupt") }
            if isKey { prevSize.key = s } else { prevSize.other = s }
            var cts: Int64 = 0
            if hasCTS { cts = unzigzag(try getVarint(bytes, &i)) }
            guard d >= 0, d <= UInt32.max, s >= 0, s <= UInt32.max else { throw IndexError("frame index: corrupt") }
            frames.append(
                Frame(
                    duration: UInt32(d), size: UInt32(s), isKey: isKey,
                    compositionOffset: Int32(truncatingIfNeeded: cts)))
        }
        return frames
    }

    /// Where each fragment's data starts in the file and how many samples of each track it holds.
    public struct Fragment: Sendable, Equatable {
        public var dataOffset: Int64
        public var sampleCounts: [Int]
        public init(dataOffset: Int64, sampleCounts: [Int]) {
            self.dataOffset = dataOffset
            self.sampleCounts = sampleCounts
        }
    }

    /// Layout: version (1), track count, then per fragment varint(offset delta) and a varint count per track.
    public static func encodeFragments(_ fragments: [Fragment], tracks: Int) -> Data {
        var out = Data([1, UInt8(tracks)])
        var prev: Int64 = 0
        for f in fragments {
            putVarint(f.dataOffset - prev, &out)
            prev = f.dataOffset
            for t in 0..<tracks { putVarint(Int64(t < f.sampleCounts.count ? f.sampleCounts[t] : 0), &out) }
        }
        return out
    }

    public static func decodeFragments(_ data: Data) throws -> [Fragment] {
        let bytes = [UInt8](data)
        guard bytes.count >= 2, bytes[0] == 1 else { throw IndexError("fragment index: unknown version") }
        let tracks = Int(bytes[1])
        guard tracks >= 1 else { throw IndexError("fragment index: no tracks") }
        var i = 2
        var prev: Int64 = 0
        var result: [Fragment] = []
        while i < bytes.count {
            let (next, overflow) = prev.addingReportingOverflow(try getVarint(bytes, &i))
            guard !overflow, next >= 0 else { throw IndexError("fragment index: corrupt offset") }
            prev = next
            var counts: [Int] = []
            for _ in 0..<tracks {
                let n = try getVarint(bytes, &i)
                guard n >= 0, n <= Int64(UInt32.max) else { throw IndexError("fragment index: corrupt sample count") }
                counts.append(Int(n))
            }
            result.append(Fragment(dataOffset: prev, sampleCounts: counts))
        }
        return result
    }

    static func zigzag(_ v: Int64) -> Int64 { (v << 1) ^ (v >> 63) }
    static func unzigzag(_ v: Int64) -> Int64 { Int64(bitPattern: UInt64(bitPattern: v) >> 1) ^ -(v & 1) }

    static func putVarint(_ v: Int64, _ out: inout Data) {
        var u = UInt64(bitPattern: v)
        while u >= 0x80 {
            out.append(UInt8(u & 0x7F) | 0x80)
            u >>= 7
        }
        out.append(UInt8(u))
    }

    static func getVarint(_ b: [UInt8], _ i: inout Int) throws -> Int64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard i < b.count, shift < 64 else { throw IndexError("frame index: truncated") }
            let byte = b[i]
            i += 1
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return Int64(bitPattern: result) }
            shift += 7
        }
    }
}
