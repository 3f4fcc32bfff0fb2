import Foundation
import NVRIndex
import NVRPlayback
import NVRStorage
import TestSupport
import Testing

/// Retention's rules on simulated time, in-process: a storage root whose segments are rows
/// and small files made by the test (no camera), and `enforce(now:)` called at the times a
/// running server would reach. What `RetentionTests` checks on real recordings, in seconds.
@Suite struct RetentionPlanTests {
    static let minute: Int64 = 60 * 90_000
    static let day: Int64 = 86_400 * 90_000
    let root = TestEnvironment.tempDir("retention-plan")
    let storage: StorageLayout
    let index: IndexDatabase
    let retention: Retention
    let entry: Int64

    init() throws {
        storage = StorageLayout(root: root)
        try storage.prepare()
        index = try IndexDatabase(path: storage.indexPath)
        retention = Retention(index: index, storage: storage, logger: TestEnvironment.logger)
        // Free space is not under test: the machine's own disk decides nothing here.
        try index.setSetting(RetentionSettings.minFreeKey, "0")
        entry = try index.sampleEntryID(
            SampleEntryRecord(
                codec: "h264", rfc6381: "avc1", width: 1, height: 1, sampleRate: 0, channels: 0,
                timescale: 90_000, extradata: Data(), box: Data([1, 2, 3])))
    }

    /// One complete one-minute segment of `bytes` starting `start`, with its file.
    @discardableResult
    func segment(_ camera: CameraRecord, at start: Int64, bytes: Int64, event: Bool = false) throws -> SegmentRecord {
        let path = storage.segmentPath(camera: camera.name, start90k: start, runID: 1, seq: Int(start / Self.minute))
        try FileManager.default.createDirectory(
            atPath: (storage.absolute(path) as NSString).deletingLastPathComponent,
            withIntermediateDirectories: true)
        try Data(count: 16).write(to: URL(fileURLWithPath: storage.absolute(path)))
        var s = try index.insertSegment(
            SegmentRecord(
                cameraID: camera.id!, runID: 1, runSeq: Int(start / Self.minute), start90k: start,
                path: path, videoEntryID: entry, audioEntryID: nil, source: "live"))
        s.duration90k = Self.minute
        s.bytes = bytes
        s.frames = 1
        s.hasEvent = event
        try index.completeSegment(
            s,
            frames: SegmentFramesRecord(
                segmentID: s.id!, videoIndex: Data([1, 0]), audioIndex: nil,
                fragmentIndex: Data(), audioStart90k: nil))
        return s
    }

    func left(_ camera: CameraRecord) throws -> [Int64] {
        try index.segments(cameraID: camera.id!).map { $0.start90k }.sorted()
    }

    @Test func ageLimitsAndCapsDeleteOldestContinuousFirstAsTimeGoesOn() throws {
        defer { TestEnvironment.cleanup(root) }
        let t0: Int64 = 1_800_000_000 * 90_000
        let porch = try index.addCamera(CameraRecord(name: "porch", plugin: "demo", config: "{}", created90k: 0))
        let yard = try index.addCamera(CameraRecord(name: "yard", plugin: "demo", config: "{}", created90k: 0))
        try index.setRetention(CameraRetention(cameraID: porch.id!, continuousDays: 1, eventDays: 3))
        try index.setRetention(CameraRetention(cameraID: yard.id!, maxBytes: 3_000))
        // porch: a segment at each of days 0…4 (the even days have an event).
        for d: Int64 in 0...4 { try segment(porch, at: t0 + d * Self.day, bytes: 100, event: d % 2 == 0) }
        // yard: six 1000-byte segments, the two oldest with events.
        for m: Int64 in 0..<6 { try segment(yard, at: t0 + m * Self.minute, bytes: 1_000, event: m < 2) }

        // Day 4 and a half: porch keeps a day of continuous footage (day 4) and three days of
        // events (days 2 and 4); yard is cut to its cap, continuous footage first.
        var report = try retention.enforce(dryRun: false, now: t0 + 4 * Self.day + Self.day / 2)
        #expect(try left(porch) == [t0 + 2 * Self.day, t0 + 4 * Self.day])
        #expect(
            try left(yard) == [t0, t0 + Self.minute, t0 + 5 * Self.minute], "the oldest continuous minutes go first")
        #expect(report.segments == 3 + 3)
        for s in try index.segments(cameraID: porch.id!) + index.segments(cameraID: yard.id!) {
            #expect(FileManager.default.fileExists(atPath: storage.absolute(s.path)))
        }
        let porchFiles = try FileManager.default.subpathsOfDirectory(atPath: storage.root + "/recordings/porch").filter
        { $0.hasSuffix(".mp4") }
        #expect(porchFiles.count == 2, "deleted segments' files are gone: \(porchFiles)")

        // Nothing more is due an hour later (a pass that changes nothing changes nothing).
        report = try retention.enforce(dryRun: false, now: t0 + 4 * Self.day + Self.day / 2 + 60 * Self.minute)
        #expect(report.segments == 0)

        // Two days on: day 2's event footage is past three days; day 4's is not.
        try retention.enforce(dryRun: false, now: t0 + 6 * Self.day + Self.day / 2)
        #expect(try left(porch) == [t0 + 4 * Self.day])

        // A storage-wide cap below what is left: the oldest footage of any camera goes,
        // continuous before events (yard's last minute), then the oldest event footage.
        try index.setSetting(RetentionSettings.rootMaxKey, "1100")
        let dry = try retention.enforce(dryRun: true, now: t0 + 6 * Self.day + Self.day / 2)
        let yardAfterDryRun = try left(yard).count
        #expect(dry.segments == 2 && yardAfterDryRun == 3, "a dry run deletes nothing")
        try retention.enforce(dryRun: false, now: t0 + 6 * Self.day + Self.day / 2)
        #expect(try left(yard) == [t0 + Self.minute])
        #expect(try left(porch) == [t0 + 4 * Self.day])
    }
}
