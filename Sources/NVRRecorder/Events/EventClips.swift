import Foundation
import NVRIndex
import NVRPlayback
import NVRTime

/// The recording of an event: from the key frame at or before (start − pre-roll) to
/// end + post-roll (to now while the event is in progress).
public enum EventClips {
    /// The clip's range on the wall clock; the start is exactly a recorded key frame when
    /// footage reaches back that far, else the first frame recorded after it.
    public static func range(
        of e: EventRecord, index: any IndexStore, storage: StorageLayout, now: Int64 = Time90k.now()
    ) throws -> Range<Int64> {
        let wanted = e.start90k - e.preRoll90k
        let end = e.end90k.map { $0 + e.postRoll90k } ?? now
        var start = wanted
        let segs = try index.segments(cameraID: e.cameraID, start90k: wanted, end90k: end)
        if let first = segs.first(where: { $0.state != .deleting }) {
            let m = try SegmentMedia.load(first, index: index, storage: storage, audioTimescale: nil)
            if let f = m.frame(at: wanted) {
                start = m.videoTimes[m.keyFrame(before: f)]
            } else if let t0 = m.videoTimes.first {
                start = t0  // recording began after the wanted start
            }
        }
        guard start < end else { throw NothingRecorded(start: wanted, end: end) }
        return start..<end
    }
}
