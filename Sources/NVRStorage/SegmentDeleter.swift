import Foundation
import NVRIndex
import NVRPlayback

/// Deletes segments crash-safely and in batches: mark rows *deleting*, unlink the files,
/// remove the rows. A crash in between leaves *deleting* rows, which recovery finishes.
public struct SegmentDeleter {
    public let index: any IndexStore
    public let storage: StorageLayout

    public init(index: any IndexStore, storage: StorageLayout) {
        self.index = index
        self.storage = storage
    }

    /// Deletes in batches of 5000; `progress(done, total)` after each batch. With a `reason`
    /// ("user", "retention") the span of each camera's deleted segments is recorded as deleted,
    /// so card backfill does not bring it back (a camera's card still has it).
    @discardableResult
    public func delete<C: Collection>(_ segments: C, reason: String? = nil, progress: (Int, Int) -> Void = { _, _ in })
        throws -> Int
    where C.Element == SegmentRecord {
        let all = Array(segments)
        if let reason {
            // Recorded first: a crash mid-way leaves the span marked, never footage re-fetched.
            for (cameraID, mine) in Dictionary(grouping: all, by: \.cameraID) {
                guard let first = mine.map(\.start90k).min(), let last = mine.map(\.end90k).max(), first < last else {
                    continue
                }
                try index.recordDeleted(cameraID: cameraID, first..<last, reason: reason)
            }
        }
        var done = 0
        for start in stride(from: 0, to: all.count, by: 5000) {
            let batch = all[start..<min(start + 5000, all.count)]
            let ids = batch.compactMap(\.id)
            try index.markDeleting(segmentIDs: ids)
            // Another node's segment: under its root where that is mounted here.
            for s in batch { unlink((try? storage.localFile(of: s)) ?? storage.absolute(s.path)) }
            try index.removeSegments(ids: ids)
            done += ids.count
            progress(done, all.count)
        }
        return done
    }

    /// A camera's complete segments lying wholly inside [start, end] (1 ms of slack: times
    /// copied from listings are rounded to the millisecond), split into those that may go and
    /// those a clip marked "keep" protects. Segments are never cut.
    public func segments(cameraID: Int64, inside range: ClosedRange<Int64>) throws -> (
        deletable: [SegmentRecord], protected: [SegmentRecord]
    ) {
        let slack: Int64 = 90
        let inside = try index.segments(cameraID: cameraID, start90k: range.lowerBound, end90k: range.upperBound)
            .filter {
                $0.start90k >= range.lowerBound - slack && $0.end90k <= range.upperBound + slack
                    && $0.state == .complete
            }
        var deletable: [SegmentRecord] = []
        var protected: [SegmentRecord] = []
        for s in inside {
            if try index.isProtected(cameraID: cameraID, start90k: s.start90k, end90k: s.end90k) {
                protected.append(s)
            } else {
                deletable.append(s)
            }
        }
        return (deletable, protected)
    }
}
