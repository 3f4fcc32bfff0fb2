import Foundation
import NVRCommands
import NVRIndex
import NVRPlayback
import NVRRecorder
import NVRStorage
import NVRTime
import TestSupport
import Testing

/// `nvr db check`, `recordings days/list --date/delete` on a real index with real files.
@Suite(.serialized, .tags(.system)) struct AdminCommandTests {
    /// Records the demo camera into a fresh root for a few seconds with 1 s segments.
    func recordedRoot() throws -> (root: String, config: String) {
        let root = TestEnvironment.tempDir("admin")
        let config = try writeConfig(root: root, plugins: TestEnvironment.buildDir, segmentSeconds: 1)
        let h = try Recorder(config: try NVRConfig.load(path: config), logger: TestEnvironment.logger)
        try h.index.setSetting(RetentionSettings.minFreeKey, "0")
        try h.start(addDemoIfEmpty: true)
        let cam = try #require(try h.index.camera(named: "demo"))
        #expect(
            TestEnvironment.wait(timeout: 25) {
                ((try? h.index.segments(cameraID: cam.id!).filter { $0.state == .complete }.count) ?? 0) >= 5
            })
        h.stop()
        return (root, config)
    }

    func nvr(_ args: [String], _ config: String) throws -> ProcessResult {
        try runProcess(TestEnvironment.nvrExecutable, args + ["--config", config])
    }

    @Test func dbCheckFindsAndRepairsInjectedFaults() throws {
        let (root, config) = try recordedRoot()
        defer { TestEnvironment.cleanup(root) }
        var r = try nvr(["db", "check", "--deep"], config)
        #expect(r.status == 0 && r.stdout.contains("ok: index and files agree"), "\(r.stdout) \(r.stderr)")

        let storage = StorageLayout(root: root + "/Storage")
        let index = try IndexDatabase(path: storage.indexPath)
        let segs = try index.allSegments()
        try #require(segs.count >= 5)
        // Inject: a deleted file, an orphan file, a truncated file, a row left writing.
        unlink(storage.absolute(segs[0].path))
        try FileManager.default.copyItem(
            atPath: storage.absolute(segs[1].path), toPath: storage.recordingsDir + "/demo/stray.mp4")
        let truncated = storage.absolute(segs[2].path)
        let full = try Data(contentsOf: URL(fileURLWithPath: truncated))
        try full.prefix(full.count - 300).write(to: URL(fileURLWithPath: truncated))
        try index.markWriting(segmentID: segs[3].id!)

        r = try nvr(["db", "check", "--json"], config)
        #expect(r.status == 1)
        for kind in ["missing-file", "orphan-file", "size-mismatch", "left-writing"] {
            #expect(r.stdout.contains("\"\(kind)\""), "\(kind) not found in \(r.stdout)")
        }
        // While a server holds the root (its lock, taken here), what it may be doing right then
        // is not a problem: a writing row, a file just begun (its row comes a moment later), a
        // segment deleted while the check runs. The lasting faults injected above stay reported.
        do {
            let lock = try ServeLock(storage: storage)
            let stray = storage.recordingsDir + "/demo/stray.mp4"
            let begun = storage.recordingsDir + "/demo/just-begun.mp4"
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: stray)
            try FileManager.default.copyItem(atPath: stray, toPath: begun)
            try FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: begun)
            let gone = segs[4]
            var deleted = false
            let found = try IntegrityCheck(index: index, storage: storage, logger: TestEnvironment.logger).run(
                deep: false, repair: false,
                progress: { i, _ in
                    // Retention deletes a segment while the check is on its first row.
                    if i == 0 && !deleted {
                        deleted = true
                        _ = try? SegmentDeleter(index: index, storage: storage).delete([gone], reason: "retention")
                    }
                })
            let kinds = Set(found.map(\.kind.rawValue))
            #expect(
                kinds.isSuperset(of: ["missing-file", "orphan-file", "size-mismatch"])
                    && !kinds.contains("left-writing"),
                "\(kinds)")
            #expect(
                deleted && !found.contains { $0.path.hasSuffix("just-begun.mp4") || $0.segmentID == gone.id },
                "\(found)")
            #expect(found.contains { $0.path.hasSuffix("stray.mp4") }, "\(found)")
            try FileManager.default.removeItem(atPath: begun)
            withExtendedLifetime(lock) {}
        }
        // Rows waiting in an index journal (an outage of PostgreSQL): their files are not
        // strays, so no repair until serve has written them.
        let journal = storage.indexJournalPath
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: journal))
        r = try nvr(["db", "check", "--repair"], config)
        #expect(r.status != 0 && r.stderr.contains("holds rows the index has not taken yet"), "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: storage.recordingsDir + "/demo/stray.mp4"))
        try FileManager.default.removeItem(atPath: journal)
        r = try nvr(["db", "check", "--repair"], config)
        #expect(r.status == 0, "\(r.stdout) \(r.stderr)")
        #expect(r.stdout.contains("repaired: index and files agree"))
        r = try nvr(["db", "check", "--deep"], config)
        #expect(r.status == 0, "\(r.stdout)")
        // The truncated segment was re-indexed, not dropped, and still plays.
        let fixed = try #require(try index.allSegments().first { $0.id == segs[2].id })
        #expect(fixed.frames < segs[2].frames && fixed.frames > 0)
        #expect(try ffprobeStreams(truncated).first?.frames == fixed.frames)
        #expect(FileManager.default.fileExists(atPath: root + "/Storage/trash/recordings/demo/stray.mp4"))

        // --deep decodes: a segment whose first key frame is garbage (same size) is unreadable.
        let victim = try #require(try index.allSegments().last)
        let data = try #require(try index.frames(segmentID: victim.id!))
        let offset = try #require(try FrameIndex.decodeFragments(data.fragmentIndex).first?.dataOffset)
        let h = try FileHandle(forWritingTo: URL(fileURLWithPath: storage.absolute(victim.path)))
        try h.seek(toOffset: UInt64(offset))
        try h.write(contentsOf: Data(repeating: 0xFF, count: 64))
        try h.close()
        r = try nvr(["db", "check"], config)
        #expect(r.status == 0)  // sizes agree: only --deep can tell
        r = try nvr(["db", "check", "--deep", "--json"], config)
        #expect(r.status == 1 && r.stdout.contains("\"unreadable\""), "\(r.stdout)")
    }

    @Test func daysListByDateAndDelete() throws {
        let (root, config) = try recordedRoot()
        defer { TestEnvironment.cleanup(root) }
        let today = try LocalDays(tz: "UTC")
        let now = Time90k.now()
        let f = DateFormatter()
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd"
        let date = f.string(from: Time90k.date(now))
        _ = today
        var r = try nvr(
            ["recordings", "days", "--camera", "demo", "--month", String(date.prefix(7)), "--tz", "UTC"], config)
        #expect(r.status == 0 && r.stdout.contains(date), "\(r.stdout) \(r.stderr)")
        r = try nvr(
            ["recordings", "days", "--camera", "demo", "--month", String(date.prefix(7)), "--tz", "UTC", "--json"],
            config)
        struct Days: Decodable {
            struct Day: Decodable {
                var date: String
                var seconds: Double
            }
            var tz: String
            var days: [Day]
        }
        let days = try JSONDecoder().decode(Days.self, from: Data(r.stdout.utf8))
        #expect(days.tz == "UTC" && days.days.map(\.date) == [date] && days.days[0].seconds > 5)
        r = try nvr(["recordings", "list", "--camera", "demo", "--date", date, "--tz", "UTC", "--json"], config)
        #expect(r.status == 0)
        struct Out: Decodable {
            struct Slice: Decodable { var segments: Int }
            var slices: [Slice]
        }
        let out = try JSONDecoder().decode(Out.self, from: Data(r.stdout.utf8))
        #expect(out.slices.count == 1 && out.slices[0].segments >= 5)
        r = try nvr(
            ["recordings", "list", "--camera", "demo", "--date", date, "--start", "2026-01-01T00:00:00Z"], config)
        #expect(r.status != 0)

        // Delete the first three segments by time; segments straddling the range stay whole.
        let index = try IndexDatabase(path: root + "/Storage/index.sqlite")
        let segs = try index.allSegments().sorted { $0.start90k < $1.start90k }
        let start = Time90k.rfc3339(segs[0].start90k)
        let end = Time90k.rfc3339(segs[2].end90k + 900)
        r = try nvr(["recordings", "delete", "--camera", "demo", "--start", start, "--end", end], config)
        #expect(r.status != 0 && r.stderr.contains("without --yes"))  // no terminal to ask
        r = try nvr(["recordings", "delete", "--camera", "demo", "--start", start, "--end", end, "--yes"], config)
        #expect(r.status == 0 && r.stdout.contains("deleted 3 segments"), "\(r.stdout) \(r.stderr)")
        #expect(try index.allSegments().count == segs.count - 3)
        #expect(!FileManager.default.fileExists(atPath: root + "/Storage/" + segs[0].path))
        r = try nvr(["db", "check"], config)
        #expect(r.status == 0)
    }

    @Test func cameraSetShowAndEventsList() throws {
        let root = TestEnvironment.tempDir("admin")
        defer { TestEnvironment.cleanup(root) }
        let config = try writeConfig(root: root, plugins: TestEnvironment.buildDir, segmentSeconds: 1)
        var r = try nvr(["camera", "add", "gate", "--plugin", "demo"], config)
        #expect(r.status == 0, "\(r.stderr)")
        r = try nvr(
            [
                "camera", "set", "gate", "--mode", "events", "--schedule", "mon-fri 08:00-18:00 continuous; * events",
                "--tz", "Europe/Paris",
                "--pre-roll", "3", "--post-roll", "7.5", "--motion-sensitivity", "70", "--motion-mask", "0,0 1,0 1,0.2",
                "--json",
            ], config)
        #expect(r.status == 0, "\(r.stderr)")
        struct Shown: Decodable {
            struct Motion: Decodable {
                var sensitivity: Int
                var masks: [[[Double]]]
                var enabled: String
            }
            var mode: String
            var schedule: String?
            var tz: String?
            var preRollSeconds: Double
            var postRollSeconds: Double
            var motionActive: Bool
            var motion: Motion
        }
        let shown = try JSONDecoder().decode(Shown.self, from: Data(r.stdout.utf8))
        #expect(
            shown.mode == "events" && shown.schedule == "mon-fri 08:00-18:00 continuous; * events"
                && shown.tz == "Europe/Paris")
        #expect(shown.preRollSeconds == 3 && shown.postRollSeconds == 7.5 && shown.motionActive)
        #expect(
            shown.motion.sensitivity == 70 && shown.motion.masks == [[[0, 0], [1, 0], [1, 0.2]]]
                && shown.motion.enabled == "auto")
        // Mistakes are refused with a clear line and change nothing.
        for bad in [
            ["--mode", "sometimes"], ["--schedule", "weekdays continuous"], ["--tz", "Mars/Base"],
            ["--motion-mask", "0,0 1,1"],
            ["--motion-sensitivity", "0"], ["--pre-roll", "-1"], ["--motion-frames", "some"],
        ] {
            r = try nvr(["camera", "set", "gate"] + bad, config)
            #expect(r.status != 0 && !r.stderr.isEmpty, "\(bad): \(r.stdout)")
        }
        r = try nvr(["camera", "show", "gate"], config)
        #expect(
            r.status == 0 && r.stdout.contains("sensitivity 70") && r.stdout.contains("pre-roll   3.0 s"), "\(r.stdout)"
        )
        r = try nvr(["camera", "set", "nobody", "--mode", "off"], config)
        #expect(r.status != 0 && r.stderr.contains("no camera named 'nobody'"))

        // Events as the recorder stores them, listed by local day and by range.
        let index = try IndexDatabase(path: root + "/Storage/index.sqlite")
        let cam = try #require(try index.camera(named: "gate"))
        let start = try #require(Time90k.parse("2026-11-21T23:30:00Z"))  // 00:30 on the 22nd in Paris
        _ = try index.insertEvent(
            EventRecord(
                cameraID: cam.id!, start90k: start, end90k: start + 12 * 90_000, type: "motion", source: .motion,
                score: 0.02, snapshot90k: start + 90_000, preRoll90k: 270_000, postRoll90k: 675_000))
        _ = try index.insertEvent(
            EventRecord(
                cameraID: cam.id!, start90k: start + 3600 * 90_000, type: "doorbell", source: .plugin,
                preRoll90k: 270_000, postRoll90k: 675_000))
        r = try nvr(
            ["events", "list", "--camera", "gate", "--date", "2026-11-22", "--tz", "Europe/Paris", "--json"], config)
        #expect(r.status == 0, "\(r.stderr)")
        struct Listed: Decodable {
            struct E: Decodable {
                var type: String
                var source: String
                var seconds: Double
                var inProgress: Bool
            }
            var events: [E]
        }
        let listed = try JSONDecoder().decode(Listed.self, from: Data(r.stdout.utf8))
        #expect(listed.events.map(\.type) == ["motion", "doorbell"])
        #expect(listed.events[0].seconds == 12 && !listed.events[0].inProgress && listed.events[1].inProgress)
        r = try nvr(
            ["events", "list", "--camera", "gate", "--date", "2026-11-22", "--tz", "UTC", "--type", "motion"], config)
        #expect(r.status == 0 && r.stdout.contains("no events"), "the motion event was on the 21st in UTC: \(r.stdout)")
        r = try nvr(
            ["events", "list", "--camera", "gate", "--start", "2026-11-22T00:00:00Z", "--end", "2026-11-23T00:00:00Z"],
            config)
        #expect(r.status == 0 && r.stdout.contains("doorbell") && r.stdout.contains("in progress"), "\(r.stdout)")
        r = try nvr(["events", "list", "--camera", "gate"], config)
        #expect(r.status != 0, "a day or a range is required")
    }
}
