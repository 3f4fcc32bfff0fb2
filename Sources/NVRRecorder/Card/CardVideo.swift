import NVRIndex
import NVRPlayback
import NVRTime

/// One video on a camera's card as the last listing saw it, on the NVR's clock, with how much
/// of it the NVR already has: what `nvr card list` prints and `GET /api/cameras/{name}/card`
/// answers.
public struct CardVideo: Encodable, Sendable, Equatable {
    public var file: String
    public var name: String
    public var start: String
    public var start90k: Int64
    public var end: String
    public var end90k: Int64
    public var seconds: Double
    public var bytes: Int64
    /// Seconds of the video the NVR has (recorded live or backfilled).
    public var coveredSeconds: Double
    /// False: listed (and downloadable) but kept off the timeline (a 360 camera's second lens).
    public var onTimeline: Bool
    /// "card", or "cloud" (on the timeline, never read).
    public var source: String

    /// The videos overlapping `range` (90 kHz), oldest first.
    public static func listed(index: any IndexStore, cameraID: Int64, range: Range<Int64>) throws -> [CardVideo] {
        let slices = try index.cardSlices(
            cameraID: cameraID, start90k: range.lowerBound, end90k: range.upperBound, includeOffTimeline: true)
        return try slices.map { s in
            let spans = try index.timelineSpans(cameraID: cameraID, start90k: s.start90k, end90k: s.end90k)
            let missing = (s.start90k..<max(s.end90k, s.start90k + 1)).gaps(
                covered: spans.map { $0.start90k..<$0.end90k }, minimum: 0
            )
            .reduce(Int64(0)) { $0 + Int64($1.count) }
            let length = max(0, s.end90k - s.start90k)
            return CardVideo(
                file: s.fileID, name: s.name, start: Time90k.rfc3339(s.start90k), start90k: s.start90k,
                end: Time90k.rfc3339(s.end90k), end90k: s.end90k, seconds: Double(length) / 90_000, bytes: s.bytes,
                coveredSeconds: Double(max(0, length - missing)) / 90_000, onTimeline: s.onTimeline,
                source: s.source.rawValue)
        }
    }
}
