import Foundation
import NVRIndex
import NVRPlayback

/// Recently built multi-camera exports. The page asks for one's size (HEAD) and then downloads
/// it (GET): both, and a user's repeated HEADs while filling the form, cost one build. Kept a
/// few seconds only: segments being written still grow.
final class ExportCache: Sendable {
    private struct Key: Hashable, Sendable {
        var cameras: [Int64]
        var start: Int64
        var end: Int64
        var speed: Int?
    }
    private let recent: RecentBuilds<Key, MultiCameraExport>

    init(ttl: Double = 10, capacity: Int = 8, clock: @escaping @Sendable () -> Double = { monotonicSeconds() }) {
        recent = RecentBuilds(ttl: ttl, capacity: capacity, clock: clock)
    }

    func export(
        index: any IndexStore, storage: StorageLayout, cameras: [CameraRecord], range: Range<Int64>, speed: Int?
    ) throws -> MultiCameraExport {
        let key = Key(cameras: cameras.compactMap(\.id), start: range.lowerBound, end: range.upperBound, speed: speed)
        return try recent.value(for: key) {
            try MultiCameraExport.build(
                index: index, storage: storage, cameras: cameras, start: range.lowerBound, end: range.upperBound,
                speed: speed)
        }
    }
}
