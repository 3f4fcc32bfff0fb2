import Foundation
import NVRIndex

/// Deletes segments crash-safely and in batches: mark rows *deleting*, unlink the files,
/// remove the rows. A crash in between leaves *deleting* rows, which recovery finishes.
public struct SegmentDeleter {
    public let index: IndexDatabase
    public let storage: StorageLayout

    public init(index: IndexDatabase, storage: StorageLayout) { self.index = index; self.storage = storage }

    @discardableResult
    public func delete(_ segments: [SegmentRecord]) throws -> Int {
        let ids = segments.compactMap(\.id)
        try index.markDeleting(segmentIDs: ids)
        for s in segments { unlink(storage.absolute(s.path)) }
        try index.removeSegments(ids: ids)
        return ids.count
    }
}
