import Foundation
import NVRIndex
import NVRPlayback
import TestSupport
import Testing

/// The page over footage recorded beforehand, in Chromium, against a real `nvr serve`: the
/// Export view (Tests/Browser/export_test.py: three cameras' same minutes as one ZIP, a
/// timelapse, bad input said next to its field) and the day bar (timeline_test.py: a short
/// recording seen on the day, zoom, a click at ten minutes, labelled event marks) and every
/// camera at one moment (moment_test.py).
@Suite(.serialized, .tags(.system)) struct ExportPageTests {
    /// Three cameras' 150 s, recorded half an hour ago (on a whole second), disabled (footage
    /// only: nothing to connect to), a person event on the first; `nvr serve` over them.
    final class Footage {
        let harness: RecorderHarness
        let served: LiveChangeTests.Served
        let start: Int64
        let event: Int64
        let shots = TestEnvironment.repoRoot + "/.build/test-screenshots"

        /// Half an hour ago, on a whole second; but near midnight (local) noon of that day, or
        /// of the day before when that noon is still to come: the day bar's zoom keeps the time
        /// under the pointer and stops at the day's ends, and the tests read footage by its day.
        static func safeStart(now: Date = Date()) -> Int64 {
            let ago = now.addingTimeInterval(-1800)
            let calendar = Calendar.current
            let hour = calendar.component(.hour, from: ago)
            var chosen = ago
            if hour < 3 || hour >= 21 {
                let noon = calendar.date(bySettingHour: 12, minute: 0, second: 0, of: ago) ?? ago
                chosen = noon < ago ? noon : noon.addingTimeInterval(-86_400)
            }
            return Int64(chosen.timeIntervalSince1970.rounded(.down)) * 90_000
        }

        init(extraConfig: String = "") throws {
            try #require(
                FileManager.default.isExecutableFile(atPath: PageTests.python),
                "playwright is missing: run scripts/install-deps.sh test")
            harness = try RecorderHarness()
            start = Self.safeStart()
            event = start + 60 * 90_000
            for (name, pattern) in [("front", "testsrc"), ("yard", "smptebars"), ("door", "rgbtestsrc")] {
                let clip = harness.root + "/\(name).ts"
                try RecorderHarness.makeClip(clip, seconds: 150, pattern: pattern)
                var cam = try harness.record([clip], as: name, start90k: start)
                cam.enabled = false
                try harness.index.updateCamera(cam)
                if name == "front" {
                    try harness.index.insertEvent(
                        EventRecord(
                            cameraID: cam.id!, start90k: event, end90k: event + 5 * 90_000, type: "person",
                            source: .detection, score: 0.9, preRoll90k: 0, postRoll90k: 0))
                }
            }
            served = try LiveChangeTests.Served(extraConfig: extraConfig, storageRoot: harness.root)
            try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)
        }

        func run(_ script: String, _ args: [String]) throws -> ProcessResult {
            try runProcess(
                PageTests.python,
                [
                    TestEnvironment.repoRoot + "/Tests/Browser/" + script, "--base", "http://127.0.0.1:\(served.port)",
                    "--user", "boss", "--password", "correct horse", "--shots", shots,
                ] + args)
        }
    }

    @Test func threeCamerasExportedFromThePage() throws {
        let f = try Footage()
        let r = try f.run(
            "export_test.py",
            [
                "--cameras", "front,yard,door", "--start", String(f.start + 10 * 90_000),
                "--end", String(f.start + 130 * 90_000), "--out", f.harness.root + "/download",
            ])
        print(r.stdout)
        #expect(r.status == 0, "the export view failed in chromium:\n\(r.stdout)\n\(r.stderr.suffix(3000))")
    }

    @Test func theDayBarShowsAShortRecordingAndZooms() throws {
        let f = try Footage()
        let segs = try f.harness.completeSegments("front")
        let r = try f.run(
            "timeline_test.py",
            [
                "--camera", "front", "--start", String(segs.first?.start90k ?? 0), "--end",
                String(segs.last?.end90k ?? 0), "--event", String(f.event),
            ])
        print(r.stdout)
        #expect(r.status == 0, "the day bar failed in chromium:\n\(r.stdout)\n\(r.stderr.suffix(3000))")
    }

    /// Settings › Server (a certificate, the detector on a picture) and a retention pass, from
    /// the page (admin_tools_test.py).
    @Test func theServerSettingsAndARetentionPassFromThePage() throws {
        let f = try Footage(extraConfig: "[detect]\nruntime = \"\(try DetectionFixture.runtime)\"")
        let out = f.harness.root + "/download"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let r = try f.run(
            "admin_tools_test.py",
            [
                "--camera", "door", "--picture", try DetectionFixture.picture("person"), "--root", f.harness.root,
                "--out", out,
            ])
        print(r.stdout)
        #expect(
            r.status == 0,
            "the server settings or retention failed in chromium:\n\(r.stdout)\n\(r.stderr.suffix(3000))\n\(f.served.logText.suffix(2000))"
        )
    }

    @Test func everyCameraAtOneMoment() throws {
        let f = try Footage()
        let r = try f.run(
            "moment_test.py",
            [
                "--cameras", "front,yard,door", "--start", String(f.start), "--end",
                String(f.start + 150 * 90_000),
            ])
        print(r.stdout)
        #expect(r.status == 0, "all cameras at one moment failed in chromium:\n\(r.stdout)\n\(r.stderr.suffix(3000))")
    }
}
