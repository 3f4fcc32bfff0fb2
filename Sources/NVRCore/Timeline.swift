import NVRIndex

/// A stretch of recording with no gap, merged from consecutive segments.
public struct RecordingSlice: Sendable, Equatable, Codable {
    public var start90k: Int64
    public var end90k: Int64
    public var segments: Int
    public var bytes: Int64
    public var duration90k: Int64 { end90k - start90k }
}

public enum Timeline {
    /// Gaps shorter than this between segments are not gaps: they come from the ≤ 500 ppm
    /// wall-clock slew between segments of one run (see design/time-model.md).
    public static let joinTolerance90k: Int64 = 90_000

    /// Merges segments (sorted by start) into contiguous slices, clipped to `range`.
    public static func slices(_ segments: [SegmentRecord], within range: Range<Int64>? = nil) -> [RecordingSlice] {
        var out: [RecordingSlice] = []
        for s in segments.sorted(by: { $0.start90k < $1.start90k }) {
            var a = s.start90k, b = s.end90k
            if let range { a = max(a, range.lowerBound); b = min(b, range.upperBound) }
            guard b > a else { continue }
            if var last = out.last, a - last.end90k <= joinTolerance90k {
                last.end90k = max(last.end90k, b)
                last.segments += 1
                last.bytes += s.bytes
                out[out.count - 1] = last
            } else {
                out.append(RecordingSlice(start90k: a, end90k: b, segments: 1, bytes: s.bytes))
            }
        }
        return out
    }
}
