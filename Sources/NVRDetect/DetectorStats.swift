import Foundation

/// The detector's counters for /metrics: inference time (a histogram), detections per camera
/// and label, pictures skipped while busy, failures.
public final class DetectorStats: @unchecked Sendable {
    // @unchecked Sendable: everything behind `lock`.
    public static let buckets: [Double] = [0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1]

    public struct Snapshot: Sendable {
        /// Cumulative counts per bucket (le), then the total count and sum.
        public var bucketCounts: [Int]
        public var count: Int
        public var sum: Double
        public var detections: [String: [String: Int]]
        public var skipped: [String: Int]
        public var inferences: [String: Int]
        public var failures: Int
    }

    private let lock = NSLock()
    private var counts = [Int](repeating: 0, count: DetectorStats.buckets.count)
    private var count = 0
    private var sum = 0.0
    private var detections: [String: [String: Int]] = [:]
    private var skippedBy: [String: Int] = [:]
    private var inferences: [String: Int] = [:]
    private var failures = 0

    func record(camera: String, seconds: Double, found: [Detection], failure: String?) {
        lock.withLock {
            count += 1
            sum += seconds
            for (i, le) in Self.buckets.enumerated() where seconds <= le { counts[i] += 1 }
            inferences[camera, default: 0] += 1
            for d in found { detections[camera, default: [:]][d.label, default: 0] += 1 }
            if failure != nil { failures += 1 }
        }
    }

    func skipped(camera: String) { lock.withLock { skippedBy[camera, default: 0] += 1 } }

    public var snapshot: Snapshot {
        lock.withLock {
            Snapshot(
                bucketCounts: counts, count: count, sum: sum, detections: detections, skipped: skippedBy,
                inferences: inferences, failures: failures)
        }
    }
}
