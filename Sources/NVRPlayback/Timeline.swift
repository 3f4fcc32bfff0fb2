import NVRIndex

public enum Timeline {
    /// Gaps shorter than this between segments are not gaps: they come from the ≤ 500 ppm
    /// wall-clock slew between segments of one run (see design/time-model.md).
    public static let joinTolerance90k: Int64 = 90_000

    /// Merges segment spans (sorted by start) into slices clipped to `range`; a slice ends at a
    /// gap, or where the kind (event or not) or the source changes.
    public static func slices(_ spans: [SegmentSpan], within range: Range<Int64>? = nil) -> [TimelineSlice] {
        var out: [TimelineSlice] = []
        for s in spans {
            var a = s.start90k
            var b = s.end90k
            if let range {
                a = max(a, range.lowerBound)
                b = min(b, range.upperBound)
            }
            guard b > a else { continue }
            let kind: TimelineSlice.Kind = s.hasEvent ? .event : .continuous
            let source: TimelineSlice.Source =
                s.source == "live" ? .disk : TimelineSlice.Source(rawValue: s.source) ?? .disk
            if let last = out.last, a - last.end90k <= joinTolerance90k, last.kind == kind, last.source == source {
                out[out.count - 1].end90k = max(last.end90k, b)
                out[out.count - 1].segments += 1
                out[out.count - 1].bytes += s.bytes
            } else {
                out.append(
                    TimelineSlice(start90k: a, end90k: b, kind: kind, source: source, segments: 1, bytes: s.bytes))
            }
        }
        return out
    }

    /// What a camera's card (or the vendor's cloud) holds that the NVR does not: those slices
    /// minus the recorded spans, clipped to `range`, as `source: card`/`cloud` slices marked
    /// `onCameraOnly`.
    public static func cardOnly(_ cards: [CardSliceRecord], covered spans: [SegmentSpan], within range: Range<Int64>)
        -> [TimelineSlice]
    {
        let covered = spans.map { $0.start90k..<$0.end90k }
        var out: [TimelineSlice] = []
        for c in cards {
            let a = max(c.start90k, range.lowerBound)
            let b = min(c.end90k, range.upperBound)
            guard b > a else { continue }
            let source: TimelineSlice.Source = c.source == .cloud ? .cloud : .card
            for g in (a..<b).gaps(covered: covered, minimum: joinTolerance90k) {
                if let i = out.lastIndex(where: { $0.source == source }),
                    out[i].end90k >= g.lowerBound - joinTolerance90k
                {
                    out[i].end90k = max(out[i].end90k, g.upperBound)
                } else {
                    out.append(
                        TimelineSlice(
                            start90k: g.lowerBound, end90k: g.upperBound, kind: .continuous, source: source,
                            segments: 0, bytes: 0, onCameraOnly: true))
                }
            }
        }
        return out
    }

    /// Recorded slices and card-only slices of a range, by start.
    public static func all(index: any IndexStore, cameraID: Int64, range: Range<Int64>) throws -> [TimelineSlice] {
        let spans = try index.timelineSpans(cameraID: cameraID, start90k: range.lowerBound, end90k: range.upperBound)
        let cards = try index.cardSlices(cameraID: cameraID, start90k: range.lowerBound, end90k: range.upperBound)
        return (slices(spans, within: range) + cardOnly(cards, covered: spans, within: range)).sorted {
            $0.start90k < $1.start90k
        }
    }

    /// The same, from full segment rows (any order).
    public static func slices(_ segments: [SegmentRecord], within range: Range<Int64>? = nil) -> [TimelineSlice] {
        slices(segments.sorted { $0.start90k < $1.start90k }.map(SegmentSpan.init), within: range)
    }

    /// The days of `month` (from LocalDays.month) that have recordings or footage on the
    /// camera's card, with their slices (card-only ones included).
    public static func recordedDays(
        index: any IndexStore, cameraID: Int64, month: [(date: String, range: Range<Int64>)]
    )
        throws -> [(date: String, range: Range<Int64>, slices: [TimelineSlice])]
    {
        try month.compactMap { d in
            let recorded = try index.hasRecordings(
                cameraID: cameraID, start90k: d.range.lowerBound, end90k: d.range.upperBound)
            let cards = try index.cardSlices(
                cameraID: cameraID, start90k: d.range.lowerBound, end90k: d.range.upperBound)
            guard recorded || !cards.isEmpty else { return nil }
            let spans =
                recorded
                ? try index.timelineSpans(cameraID: cameraID, start90k: d.range.lowerBound, end90k: d.range.upperBound)
                : []
            let all = (slices(spans, within: d.range) + cardOnly(cards, covered: spans, within: d.range)).sorted {
                $0.start90k < $1.start90k
            }
            return all.isEmpty ? nil : (d.date, d.range, all)
        }
    }
}
