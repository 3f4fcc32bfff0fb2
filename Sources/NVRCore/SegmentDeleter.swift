import Foundation
import NVRIndex

/// Deletes segments crash-safely and in batches: mark rows *deleting*, unlink the files,
/// remove the rows. A crash in between leaves *deleting* rows, which recovery finishes.
public struct SegmentDeleter {
    public let index: IndexDatabase
    public let storage: StorageLayout

    public init(index: IndexDatabase, storage: StorageLayout) { self.index = index; self.storage = storage }

    /// Deletes in batches of 5000; `progress(done, total)` after each batch.
    @discardableResult
    public func delete<C: Collection>(_ segments: C, progress: (Int, Int) -> Void = { _, _ in }) throws -> Int
    where C.Element == SegmentRecord {
        let all = Array(segments)
        var done = 0
        for start in stride(from: 0, to: all.count, by: 5000) {
            let batch = all[start..<min(start + 5000, all.count)]
            let ids = batch.compactMap(\.id)
            try index.markDeleting(segmentIDs: ids)
            for s in batch { unlink(storage.absolute(s.path)) }
            try index.removeSegments(ids: ids)
            done += ids.count
            progress(done, all.count)
        }
        return done
    }
}
