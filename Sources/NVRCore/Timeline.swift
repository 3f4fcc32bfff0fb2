import NVRIndex

/// A stretch of recording with no gap, of one kind from one source, merged from consecutive
/// segments: what `/timeline`, `/days` and `nvr recordings` show.
public struct TimelineSlice: Sendable, Equatable {
    public enum Kind: String, Sendable, Codable { case continuous, event }
    /// disk: recorded by the NVR; card: from the camera's memory card; cloud: the vendor's cloud.
    public enum Source: String, Sendable, Codable { case disk, card, cloud }
    public var start90k: Int64
    public var end90k: Int64
    public var kind: Kind
    public var source: Source
    public var segments: Int
    public var bytes: Int64
    public var duration90k: Int64 { end90k - start90k }
}

public enum Timeline {
    /// Gaps shorter than this between segments are not gaps: they come from the ≤ 500 ppm
    /// wall-clock slew between segments of one run (see design/time-model.md).
    public static let joinTolerance90k: Int64 = 90_000

    /// Merges segment spans (sorted by start) into slices clipped to `range`; a slice ends at a
    /// gap, or where the kind (event or not) or the source changes.
    public static func slices(_ spans: [SegmentSpan], within range: Range<Int64>? = nil) -> [TimelineSlice] {
        var out: [TimelineSlice] = []
        for s in spans {
            var a = s.start90k, b = s.end90k
            if let range { a = max(a, range.lowerBound); b = min(b, range.upperBound) }
            guard b > a else { continue }
            let kind: TimelineSlice.Kind = s.hasEvent ? .event : .continuous
            let source: TimelineSlice.Source = s.source == "live" ? .disk : TimelineSlice.Source(rawValue: s.source) ?? .disk
            if let last = out.last, a - last.end90k <= joinTolerance90k, last.kind == kind, last.source == source {
                out[out.count - 1].end90k = max(last.end90k, b)
                out[out.count - 1].segments += 1
                out[out.count - 1].bytes += s.bytes
            } else {
                out.append(TimelineSlice(start90k: a, end90k: b, kind: kind, source: source, segments: 1, bytes: s.bytes))
            }
        }
        return out
    }

    /// The same, from full segment rows (any order).
    public static func slices(_ segments: [SegmentRecord], within range: Range<Int64>? = nil) -> [TimelineSlice] {
        slices(segments.sorted { $0.start90k < $1.start90k }.map(SegmentSpan.init), within: range)
    }

    /// The days of `month` (from LocalDays.month) that have recordings, with their slices.
    public static func recordedDays(index: IndexDatabase, cameraID: Int64, month: [(date: String, range: Range<Int64>)])
        throws -> [(date: String, range: Range<Int64>, slices: [TimelineSlice])] {
        try month.compactMap { d in
            guard try index.hasRecordings(cameraID: cameraID, start90k: d.range.lowerBound, end90k: d.range.upperBound) else { return nil }
            let spans = try index.timelineSpans(cameraID: cameraID, start90k: d.range.lowerBound, end90k: d.range.upperBound)
            return (d.date, d.range, slices(spans, within: d.range))
        }
    }
}
