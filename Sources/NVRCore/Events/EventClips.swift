import Foundation
import NVRIndex

/// An event as the API and the CLI show it.
public struct EventSummary: Encodable, Sendable, Equatable {
    public var id: Int64
    public var camera: String
    public var type: String
    public var source: String
    public var start: String
    public var start90k: Int64
    /// nil while in progress.
    public var end: String?
    public var end90k: Int64?
    public var inProgress: Bool
    public var seconds: Double
    public var score: Double?
    public var snapshot90k: Int64?
    public var preRollSeconds: Double
    public var postRollSeconds: Double

    public init(_ e: EventRecord, camera: String, now: Int64 = Time90k.now()) {
        id = e.id ?? 0
        self.camera = camera
        type = e.type
        source = e.source.rawValue
        start = Time90k.rfc3339(e.start90k)
        start90k = e.start90k
        end = e.end90k.map(Time90k.rfc3339)
        end90k = e.end90k
        inProgress = e.end90k == nil
        seconds = Double((e.end90k ?? max(now, e.start90k)) - e.start90k) / 90_000
        score = e.score
        snapshot90k = e.snapshot90k
        preRollSeconds = Double(e.preRoll90k) / 90_000
        postRollSeconds = Double(e.postRoll90k) / 90_000
    }
}

/// The recording of an event: from the key frame at or before (start − pre-roll) to
/// end + post-roll (to now while the event is in progress).
public enum EventClips {
    /// The clip's range on the wall clock; the start is exactly a recorded key frame when
    /// footage reaches back that far, else the first frame recorded after it.
    public static func range(of e: EventRecord, index: IndexDatabase, storage: StorageLayout, now: Int64 = Time90k.now()) throws -> Range<Int64> {
        let wanted = e.start90k - e.preRoll90k
        let end = e.end90k.map { $0 + e.postRoll90k } ?? now
        var start = wanted
        let segs = try index.segments(cameraID: e.cameraID, start90k: wanted, end90k: end)
        if let first = segs.first(where: { $0.state != .deleting }) {
            let m = try SegmentMedia.load(first, index: index, storage: storage, audioTimescale: nil)
            if let f = m.frame(at: wanted) {
                start = m.videoTimes[m.keyFrame(before: f)]
            } else if let t0 = m.videoTimes.first {
                start = t0 // recording began after the wanted start
            }
        }
        guard start < end else { throw NothingRecorded(start: wanted, end: end) }
        return start..<end
    }
}
