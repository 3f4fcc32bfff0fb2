import Foundation
import NVRCameras
import NVRIndex
import NVRRecorder
import NVRStorage
import NVRTime
import TestSupport
import Testing

@Suite(.serialized, .tags(.system)) struct RetentionTests {
    /// A recorder root with ≥ `count` real demo segments (1 s target, 2 s GOP → ~2 s each).
    func recorded(count: Int) throws -> RecorderHarness {
        let h = try RecorderHarness(segmentSeconds: 1)
        try h.recorder.start(addDemoIfEmpty: true)
        #expect(TestEnvironment.wait(timeout: 30) { ((try? h.completeSegments("demo").count) ?? 0) >= count })
        h.recorder.stop()
        return h
    }

    /// Moves a segment's time back by `days` (the files stay real; only the index is aged).
    func age(_ h: RecorderHarness, _ s: SegmentRecord, days: Double) throws {
        try h.index.pool.write { db in
            try db.execute(
                sql: "UPDATE segment SET start90k = start90k - ? WHERE id = ?",
                arguments: [Int64(days * 86_400 * 90_000), s.id!])
        }
    }

    @Test func eventsGoWithTheirFootage() throws {
        let h = try recorded(count: 4)
        let segs = try h.completeSegments("demo")
        try age(h, segs[0], days: 10)
        let cam = try h.camera("demo")
        let old = try #require(try h.index.segments(cameraID: cam.id!).first)
        let oldEvent = try h.index.insertEvent(
            EventRecord(
                cameraID: cam.id!, start90k: old.start90k, end90k: old.start90k + 90_000,
                type: "motion", source: .motion, preRoll90k: 0, postRoll90k: 90_000))
        let newEvent = try h.index.insertEvent(
            EventRecord(
                cameraID: cam.id!, start90k: segs[2].start90k, end90k: segs[2].start90k + 90_000,
                type: "motion", source: .motion, preRoll90k: 0, postRoll90k: 90_000))
        try h.index.setRetention(CameraRetention(cameraID: cam.id!, continuousDays: 7))
        #expect(try h.recorder.retention.enforce(dryRun: true).segments == 1)
        #expect(try h.index.event(id: oldEvent.id!) != nil, "a dry run deletes nothing")
        #expect(try h.recorder.retention.enforce(dryRun: false).segments == 1)
        #expect(try h.index.event(id: oldEvent.id!) == nil, "its footage is gone")
        #expect(try h.index.event(id: newEvent.id!) != nil)
    }

    @Test func ageLimitsKeepEventsLongerAndDryRunChangesNothing() throws {
        let h = try recorded(count: 6)
        let segs = try h.completeSegments("demo")
        for s in segs.prefix(3) { try age(h, s, days: 10) }
        try h.index.markEvent(segmentID: segs[1].id!)
        let cam = try h.camera("demo")
        try h.index.setRetention(CameraRetention(cameraID: cam.id!, continuousDays: 7, eventDays: 30))

        let dry = try h.recorder.retention.enforce(dryRun: true)
        #expect(dry.segments == 2 && dry.dryRun)
        #expect(try h.completeSegments("demo").count == segs.count)  // nothing changed
        #expect(FileManager.default.fileExists(atPath: h.path(segs[0])))

        let real = try h.recorder.retention.enforce(dryRun: false)
        #expect(real.segments == 2)
        let left = Set(try h.completeSegments("demo").map(\.id))
        #expect(!left.contains(segs[0].id) && !left.contains(segs[2].id))
        #expect(left.contains(segs[1].id))  // the event segment is within its 30 days
        #expect(!FileManager.default.fileExists(atPath: h.path(segs[0])))
        #expect(try h.index.segments(state: .deleting).isEmpty)
        #expect(
            try IntegrityCheck(index: h.index, storage: h.recorder.storage, logger: TestEnvironment.logger).run(
                deep: false, repair: false
            ).isEmpty)
    }

    @Test func clipsMarkedKeepOutliveEveryLimit() throws {
        let h = try recorded(count: 4)
        let segs = try h.completeSegments("demo")
        for s in segs { try age(h, s, days: 10) }
        let cam = try h.camera("demo")
        let aged = try h.completeSegments("demo")
        // Keep the second segment (a range inside it is enough to keep it whole).
        try h.index.addProtectedClip(
            ProtectedClipRecord(
                cameraID: cam.id!, start90k: aged[1].start90k + 9000, end90k: aged[1].start90k + 18_000,
                eventID: nil, note: "the delivery", created90k: Time90k.now(), createdBy: "test"))
        try h.index.setRetention(CameraRetention(cameraID: cam.id!, continuousDays: 1, maxBytes: 1))
        try h.index.setSetting(RetentionSettings.rootMaxKey, "1")
        _ = try h.recorder.retention.enforce(dryRun: false)
        #expect(try h.completeSegments("demo").map(\.id) == [aged[1].id])
        // Nor does a range delete take it.
        let (doomed, kept) = try SegmentDeleter(index: h.index, storage: h.recorder.storage)
            .segments(cameraID: cam.id!, inside: aged[0].start90k...aged.last!.end90k)
        #expect(doomed.isEmpty && kept.map(\.id) == [aged[1].id])
    }

    @Test func byteCapDeletesContinuousBeforeEvents() throws {
        let h = try recorded(count: 5)
        let segs = try h.completeSegments("demo")
        try h.index.markEvent(segmentID: segs[0].id!)  // the oldest is event footage
        let total = segs.reduce(0) { $0 + $1.bytes }
        let cam = try h.camera("demo")
        // Room for all but about two segments.
        try h.index.setRetention(
            CameraRetention(cameraID: cam.id!, maxBytes: total - segs[1].bytes - segs[2].bytes / 2))
        let r = try h.recorder.retention.enforce(dryRun: false)
        #expect(r.segments == 2)
        let left = Set(try h.completeSegments("demo").map(\.id))
        #expect(left.contains(segs[0].id))  // event footage outlives continuous footage
        #expect(!left.contains(segs[1].id) && !left.contains(segs[2].id))
        #expect(try h.index.storageSummary(cameraID: cam.id!).bytes <= total - segs[1].bytes - segs[2].bytes / 2)
        // Storage-wide cap with room for one segment: all continuous footage goes, even the
        // newest, before the older event footage.
        try h.index.setSetting(RetentionSettings.rootMaxKey, String(segs[0].bytes))
        try h.recorder.retention.enforce(dryRun: false)
        #expect(try h.completeSegments("demo").map(\.id) == [segs[0].id])
    }

    @Test func fullDiskKeepsRecordingAndDropsOldestFootage() throws {
        // A 32 MB file system, mostly taken by something else, filled by a live ~4 Mbit/s camera.
        let mount = TestEnvironment.tempDir("smallfs")
        defer {
            _ = try? runProcess("/usr/bin/umount", [mount])
            TestEnvironment.cleanup(mount)
        }
        let m = try runProcess("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=32m", "tmpfs", mount])
        try #require(m.status == 0, "cannot mount a tmpfs (tests run as root): \(m.stderr)")
        try Data(count: 20 << 20).write(to: URL(fileURLWithPath: mount + "/filler"))

        var o = RTSPCameraFixture.Options()
        o.pattern = "snow"
        o.kbps = 4000
        let cam = try RTSPCameraFixture(o)
        let storage = mount + "/Storage"
        let recorder = try Recorder(
            config: TestEnvironment.config(root: storage, segmentSeconds: 2), logger: TestEnvironment.logger)
        recorder.retentionInterval = 3600  // only the disk-full path frees space here
        try CameraAdmin(index: recorder.index, storage: recorder.storage, plugins: recorder.plugins).add(
            name: "cam", plugin: "rtsp", config: ["url": cam.url])
        let camID = try #require(try recorder.index.camera(named: "cam")?.id)
        try recorder.start(addDemoIfEmpty: false)
        var firstID: Int64?
        #expect(
            TestEnvironment.wait(timeout: 20) {
                firstID = (try? recorder.index.segments(cameraID: camID).first?.id) ?? nil
                return firstID != nil
            })
        // ~12 MB free at ~0.5 MB/s: the disk fills within ~25 s; keep recording well past that.
        #expect(
            TestEnvironment.wait(timeout: 60) {
                let segs = (try? recorder.index.segments(cameraID: camID)) ?? []
                return !segs.contains { $0.id == firstID } && segs.count >= 3
            }, "oldest footage was never deleted")
        Thread.sleep(forTimeInterval: 6)
        let session = try #require(recorder.session(named: "cam"))
        #expect(session.status.state == .streaming, "\(session.status)")
        recorder.stop()
        let segs = try recorder.index.segments(cameraID: camID)
        // Still recording at the end, not stopped at the moment the disk filled.
        #expect(Time90k.now() - (segs.last?.end90k ?? 0) < 5 * 90_000)
        #expect(try recorder.index.segments(state: .deleting).isEmpty)
        let problems = try IntegrityCheck(
            index: recorder.index, storage: recorder.storage, logger: TestEnvironment.logger
        )
        .run(deep: true, repair: false)
        #expect(problems.isEmpty, "\(problems)")  // nothing half-deleted, every file complete
        for s in segs.suffix(2) {
            #expect(try ffprobeStreams(recorder.storage.absolute(s.path)).first?.frames == s.frames)
        }
    }
}
