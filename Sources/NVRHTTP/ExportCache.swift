import Foundation
import NVRIndex
import NVRPlayback
import Synchronization

/// Recently built multi-camera exports. The page asks for one's size (HEAD) and then downloads
/// it (GET): both, and a user's repeated HEADs while filling the form, cost one build. Kept a
/// few seconds only: segments being written still grow.
final class ExportCache: Sendable {
    private struct Key: Hashable {
        var cameras: [Int64]
        var start: Int64
        var end: Int64
        var speed: Int?
    }
    private let entries = Mutex<[Key: (made: Double, export: MultiCameraExport)]>([:])
    private let ttl: Double
    private let capacity: Int
    /// Seconds on a monotonic clock (a test passes its own).
    private let clock: @Sendable () -> Double

    init(ttl: Double = 10, capacity: Int = 8, clock: @escaping @Sendable () -> Double = { monotonicSeconds() }) {
        self.ttl = ttl
        self.capacity = capacity
        self.clock = clock
    }

    func export(
        index: any IndexStore, storage: StorageLayout, cameras: [CameraRecord], range: Range<Int64>, speed: Int?
    ) throws -> MultiCameraExport {
        let key = Key(cameras: cameras.compactMap(\.id), start: range.lowerBound, end: range.upperBound, speed: speed)
        let now = clock()
        if let hit = entries.withLock({ $0[key] }), now - hit.made < ttl { return hit.export }
        let built = try MultiCameraExport.build(
            index: index, storage: storage, cameras: cameras, start: range.lowerBound, end: range.upperBound,
            speed: speed)
        entries.withLock { e in
            e = e.filter { now - $0.value.made < ttl }
            if e.count >= capacity, let oldest = e.min(by: { $0.value.made < $1.value.made })?.key { e[oldest] = nil }
            e[key] = (now, built)
        }
        return built
    }
}
