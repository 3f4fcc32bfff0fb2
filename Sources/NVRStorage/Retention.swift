import Foundation
import Logging
import NVRIndex
import NVRPlayback
import Synchronization

/// Applies retention: per-camera age limits (continuous and event footage separately), per-camera
/// byte caps, a storage-wide cap and a minimum of free space. Deletion order within each rule:
/// oldest continuous footage first, then oldest event footage.
public final class Retention: Sendable {
    public let index: any IndexStore
    public let storage: StorageLayout
    private let logger: Logger
    /// One pass at a time. In `nvr serve` every pass (periodic, or urgent for a full disk) runs
    /// on the recorder's retention thread; the lock keeps any other caller from overlapping it.
    private let running = Mutex(())
    /// Totals since this process started, for /metrics.
    public let deletedSegments = Atomic<Int64>(0)
    public let deletedBytes = Atomic<Int64>(0)

    public init(index: any IndexStore, storage: StorageLayout, logger: Logger) {
        self.index = index
        self.storage = storage
        self.logger = logger
    }

    public func settings() throws -> RetentionSettings {
        var s = RetentionSettings()
        s.rootMaxBytes = try index.setting(RetentionSettings.rootMaxKey).flatMap { Int64($0) }
        if let v = try index.setting(RetentionSettings.minFreeKey).flatMap({ Double($0) }) { s.minFreePercent = v }
        return s
    }

    /// File system size and free bytes (for unprivileged users) under the storage root.
    public func fileSystem() -> (size: Int64, free: Int64)? {
        var st = statvfs()
        guard statvfs(storage.root, &st) == 0 else { return nil }
        return (Int64(st.f_blocks) * Int64(st.f_frsize), Int64(st.f_bavail) * Int64(st.f_frsize))
    }

    /// Runs one pass. `extraFree` asks for that many more free bytes than the settings do
    /// (used when a write has just failed for lack of space).
    @discardableResult
    public func enforce(
        dryRun: Bool, now: Int64 = Time90k.now(), extraFree: Int64 = 0,
        progress: (Int, Int) -> Void = { _, _ in }
    ) throws -> RetentionReport {
        try running.withLock { _ in
            let plan = try self.plan(now: now, extraFree: extraFree)
            var reasons: [String: Int] = [:]
            for p in plan { reasons[p.reason, default: 0] += 1 }
            if !dryRun {
                try SegmentDeleter(index: index, storage: storage).delete(
                    plan.map(\.segment), reason: "retention", progress: progress)
            }
            var cameras: [RetentionReport.Camera] = []
            let doomed = Set(plan.compactMap(\.segment.id))
            for cam in try index.cameras(includeRemoved: true) {
                let mine = plan.filter { $0.segment.cameraID == cam.id }
                let remaining = try index.oldestSegments(cameraID: cam.id!, limit: mine.count + 1)
                    .first { !doomed.contains($0.id!) }?.start90k
                if !dryRun && !mine.isEmpty {
                    // Events whose whole clip was deleted have nothing left to show.
                    let gone = try index.deleteEvents(cameraID: cam.id!, clipEndingBefore: remaining)
                    if gone > 0 {
                        logger.info("retention: removed \(gone) events of \(cam.name) whose footage is gone")
                    }
                }
                cameras.append(
                    .init(
                        camera: cam.name, segments: mine.count, bytes: mine.reduce(0) { $0 + $1.segment.bytes },
                        oldestRemaining: remaining.map(Time90k.rfc3339), oldestRemaining90k: remaining))
            }
            let report = RetentionReport(
                dryRun: dryRun, segments: plan.count, bytes: plan.reduce(0) { $0 + $1.segment.bytes },
                reasons: reasons, cameras: cameras)
            if !dryRun && report.segments > 0 {
                deletedSegments.add(Int64(report.segments), ordering: .relaxed)
                deletedBytes.add(report.bytes, ordering: .relaxed)
                logger.notice(
                    "retention: deleted \(report.segments) segments (\(report.bytes) bytes): \(reasons.map { "\($0.key) \($0.value)" }.sorted().joined(separator: ", "))"
                )
            }
            return report
        }
    }

    /// The segments to delete and why, in deletion order.
    public func plan(now: Int64, extraFree: Int64 = 0) throws -> [(segment: SegmentRecord, reason: String)] {
        var doomed: [(segment: SegmentRecord, reason: String)] = []
        var doomedIDs = Set<Int64>()
        var freedByCamera: [Int64: Int64] = [:]
        func take(_ s: SegmentRecord, _ why: String) {
            guard let id = s.id, doomedIDs.insert(id).inserted else { return }
            doomed.append((s, why))
            freedByCamera[s.cameraID, default: 0] += s.bytes
        }
        /// Takes candidates in deletion order (continuous, then events; oldest first) until
        /// `need` bytes are covered.
        func takeOldest(cameraID: Int64?, need: Int64, _ why: String) throws {
            var need = need
            var offset = 0
            while need > 0 {
                let batch = try index.deletionCandidates(cameraID: cameraID, limit: 2000 + offset).dropFirst(offset)
                if batch.isEmpty { return }
                offset += batch.count
                for s in batch where need > 0 && !doomedIDs.contains(s.id!) {
                    take(s, why)
                    need -= s.bytes
                }
            }
        }
        let day: Int64 = 86_400 * 90_000
        let usage = try index.bytesByCamera()

        for cam in try index.cameras(includeRemoved: true) {
            guard let id = cam.id, let r = try index.retention(cameraID: id) else { continue }
            if let d = r.continuousDays {
                for s in try index.deletionCandidates(
                    cameraID: id, olderThan: now - Int64(d * Double(day)), hasEvent: false, limit: .max)
                {
                    take(s, "continuous older than \(d) days")
                }
            }
            if let d = r.eventDays {
                for s in try index.deletionCandidates(
                    cameraID: id, olderThan: now - Int64(d * Double(day)), hasEvent: true, limit: .max)
                {
                    take(s, "events older than \(d) days")
                }
            }
            if let cap = r.maxBytes {
                try takeOldest(
                    cameraID: id, need: (usage[id] ?? 0) - (freedByCamera[id] ?? 0) - cap, "camera over \(cap) bytes")
            }
        }

        // Storage-wide: the cap on all recordings, and the free space to keep.
        let settings = try settings()
        let total = usage.values.reduce(0, +) - doomed.reduce(0) { $0 + $1.segment.bytes }
        var need: Int64 = 0
        if let cap = settings.rootMaxBytes { need = max(need, total - cap) }
        if let fs = fileSystem() {
            let wanted = Int64(Double(fs.size) * settings.minFreePercent / 100) + extraFree
            let freeAfter = fs.free + doomed.reduce(0) { $0 + $1.segment.bytes }
            need = max(need, wanted - freeAfter)
        }
        let overCap = settings.rootMaxBytes.map { total > $0 } ?? false
        try takeOldest(
            cameraID: nil, need: need, overCap ? "storage over its cap" : "keeping \(settings.minFreePercent)% free")
        return doomed
    }
}
