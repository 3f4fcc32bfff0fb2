import CamSim
import Foundation
import NVRIndex
import NVRStorage
import NVRTime
import TestSupport
import Testing

/// `nvr card sync` and `nvr card list` on a card holding a real MP4 (made by ffmpeg, moov at
/// the end) from an hour ago, with a camera clock one hour and 7 s ahead: only the asked
/// window is read (HTTP Range) and stored as `card` segments at the right UTC times.
@Suite(.serialized, .tags(.system)) struct CardSyncCommandTests {
    /// A real MP4 (ffmpeg, moov at the end) on the simulated card, last written an hour ago:
    /// its path and its end (seconds since the epoch, whole).
    static func cardVideo(_ sim: GoProFixture, name: String, seconds: Int) async throws -> (String, Double) {
        let file = sim.sim.cardFolder + "/" + name
        let make = try await TestEnvironment.blocking {
            try runProcess(
                "/usr/bin/ffmpeg",
                [
                    "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30", "-t", String(seconds),
                    "-c:v", "libx264", "-preset", "ultrafast", "-g", "30", "-pix_fmt", "yuv420p", file,
                ])
        }
        #expect(make.status == 0, "\(make.stderr)")
        let end = Date().addingTimeInterval(-3600).timeIntervalSince1970.rounded(.down)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: end)], ofItemAtPath: file)
        return (file, end)
    }

    @Test func syncReadsOnlyTheWindowAndListsTheCardOnTheNVRClock() async throws {
        let sim = try await GoProFixture { o in
            o.recordToCard = false
            o.clockOffset = 3607
        }
        let root = TestEnvironment.tempDir("cardsync")
        defer { TestEnvironment.cleanup(root) }
        // Recorded from an hour ago: the file was last written 30 s after it began.
        let (file, end) = try await Self.cardVideo(sim, name: "GH010007.MP4", seconds: 30)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int64)
        let start90k = Int64(end - 30) * 90_000

        let config = root + "/nvr.toml"
        try "[storage]\nroot = \"\(root)/data\"\n[plugins]\ndir = \"\(TestEnvironment.buildDir)\"\n".write(
            toFile: config, atomically: true, encoding: .utf8)
        func nvr(_ args: [String]) async throws -> ProcessResult {
            try await TestEnvironment.blocking {
                try runProcess(TestEnvironment.nvrExecutable, args + ["--config", config])
            }
        }
        #expect(
            try await nvr(["camera", "add", "gp", "--plugin", "gopro", "--option", "base_url=\(sim.baseURL)"]).status
                == 0)

        let served0 = sim.sim.stats.cardBytesServed
        let a = start90k + 10 * 90_000
        let b = start90k + 15 * 90_000
        let r = try await nvr(["card", "sync", "--camera", "gp", "--start", String(a), "--end", String(b), "--json"])
        #expect(r.status == 0, "\(r.stdout) \(r.stderr)")
        let out = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(out["files"] as? Int == 1 && (out["segments"] as? Int ?? 0) >= 1, "\(out)")
        #expect(abs((out["clockOffsetSeconds"] as? Double ?? 0) - 3607) < 1.5, "\(out)")
        #expect((out["warnings"] as? [String]) == [], "\(out)")
        let seconds = out["backfilledSeconds"] as? Double ?? 0
        #expect(seconds >= 4 && seconds <= 5.01, "from the first key frame after the start to the end: \(seconds) s")
        let served = sim.sim.stats.cardBytesServed - served0
        #expect(served > 0 && served < size * 6 / 10, "read \(served) of \(size) bytes: only the moov and the window")

        // The stored footage sits at the right UTC time and plays.
        let index = try IndexDatabase(path: root + "/data/index.sqlite")
        let cam = try #require(try index.camera(named: "gp"))
        let segs = try index.segments(cameraID: cam.id!)
        #expect(!segs.isEmpty && segs.allSatisfy { $0.source == "card" && $0.state == .complete })
        let firstStart = try #require(segs.map(\.start90k).min())
        #expect(
            firstStart >= a - 90_000 && firstStart <= a + 2 * 90_000,
            "starts \(Double(firstStart - a) / 90_000) s after --start (clock rule ±1 s, then a key frame)")
        #expect(segs.map(\.end90k).max()! <= b + 90_000)
        for s in segs {
            let errors = try await TestEnvironment.blocking { try decodeErrors(root + "/data/" + s.path) }
            #expect(errors.isEmpty, "\(errors)")
        }

        // card list: the video at its UTC time, a sixth of it now on the NVR.
        let day = String(Time90k.rfc3339(start90k).prefix(10))
        let listed = try await nvr(["card", "list", "--camera", "gp", "--date", day, "--tz", "UTC", "--json"])
        let videos = try #require(
            (try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])?["videos"]
                as? [[String: Any]], "\(listed.stdout)")
        let v = try #require(videos.first)
        #expect(v["file"] as? String == "100GOPRO/GH010007.MP4" && v["bytes"] as? Int64 == size)
        #expect(abs((v["start90k"] as! Int64) - start90k) <= 90_000, "start within the camera clock's 1 s resolution")
        #expect(abs((v["coveredSeconds"] as? Double ?? 0) - seconds) < 0.2)
        let table = try await nvr(["card", "list", "--camera", "gp", "--date", day, "--tz", "UTC"])
        #expect(table.stdout.contains("100GOPRO/GH010007.MP4") && table.stdout.contains("COVERED"))

        // A camera without a card, and an unreachable one, are clear errors.
        #expect(try await nvr(["camera", "add", "dm", "--plugin", "demo"]).status == 0)
        let noCard = try await nvr(["card", "sync", "--camera", "dm"])
        #expect(noCard.status != 0 && noCard.stderr.contains("cannot read a memory card"), "\(noCard.stderr)")
        #expect(
            try await nvr([
                "camera", "add", "gone", "--plugin", "gopro", "--option", "base_url=http://127.0.0.1:9", "--option",
                "http_timeout=1",
            ]).status == 0)
        let gone = try await nvr(["card", "sync", "--camera", "gone"])
        #expect(gone.status != 0 && gone.stderr.contains("camera unreachable at http://127.0.0.1:9"), "\(gone.stderr)")
    }

    /// An outage that ends just after a chapter boundary: the chapter before is backfilled first,
    /// and the second and a half left in the next chapter is filled when that one is listed
    /// (a gap after card footage is filled from a second, not two) — once, not at every sync.
    @Test func theEndOfAnOutageJustPastAChapterIsFilledFromTheNextChapter() async throws {
        let sim = try await GoProFixture { o in o.recordToCard = false }
        let root = TestEnvironment.tempDir("cardsync-chapters")
        defer { TestEnvironment.cleanup(root) }
        let (_, end) = try await Self.cardVideo(sim, name: "GH020011.MP4", seconds: 10)
        let (first, _) = try await Self.cardVideo(sim, name: "GH010011.MP4", seconds: 10)
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: end - 10)], ofItemAtPath: first)
        let chapterStart = Int64(end - 20) * 90_000
        let boundary = Int64(end - 10) * 90_000
        let config = root + "/nvr.toml"
        try "[storage]\nroot = \"\(root)/data\"\n[plugins]\ndir = \"\(TestEnvironment.buildDir)\"\n".write(
            toFile: config, atomically: true, encoding: .utf8)
        func sync(to end90k: Int64) async throws -> [String: Any] {
            let r = try await TestEnvironment.blocking {
                try runProcess(
                    TestEnvironment.nvrExecutable,
                    [
                        "card", "sync", "--camera", "gp", "--start", String(chapterStart), "--end", String(end90k),
                        "--json", "--config", config,
                    ])
            }
            #expect(r.status == 0, "\(r.stderr)")
            return (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]) ?? [:]
        }
        let add = try await TestEnvironment.blocking {
            try runProcess(
                TestEnvironment.nvrExecutable,
                ["camera", "add", "gp", "--plugin", "gopro", "--option", "base_url=\(sim.baseURL)", "--config", config])
        }
        #expect(add.status == 0, "\(add.stderr)")
        var out = try await sync(to: boundary)
        #expect((out["segments"] as? Int ?? 0) >= 1, "the first chapter: \(out)")
        out = try await sync(to: boundary + 90_000 * 3 / 2)
        #expect(
            out["gaps"] as? Int == 1 && (out["backfilledSeconds"] as? Double ?? 0) >= 1,
            "1.5 s after the first chapter: \(out)")
        out = try await sync(to: boundary + 90_000 * 3 / 2)
        #expect(out["gaps"] as? Int == 0, "nothing left to fetch: \(out)")
    }

    /// What the NVR deleted stays deleted although the card still has it: a user's range delete
    /// and retention's deletions are not backfilled again, nor is footage older than what
    /// retention keeps (it would be deleted at once).
    @Test func backfillLeavesDeletedFootageDeleted() async throws {
        let sim = try await GoProFixture { o in o.recordToCard = false }
        let root = TestEnvironment.tempDir("cardsync-deleted")
        defer { TestEnvironment.cleanup(root) }
        let (_, end) = try await Self.cardVideo(sim, name: "GH010009.MP4", seconds: 20)
        let start90k = Int64(end - 20) * 90_000
        let end90k = Int64(end) * 90_000
        let config = root + "/nvr.toml"
        try "[storage]\nroot = \"\(root)/data\"\n[plugins]\ndir = \"\(TestEnvironment.buildDir)\"\n".write(
            toFile: config, atomically: true, encoding: .utf8)
        func nvr(_ args: [String]) async throws -> ProcessResult {
            try await TestEnvironment.blocking {
                try runProcess(TestEnvironment.nvrExecutable, args + ["--config", config])
            }
        }
        func sync(_ camera: String) async throws -> [String: Any] {
            let r = try await nvr([
                "card", "sync", "--camera", camera, "--start", String(start90k - 90_000), "--end",
                String(end90k + 90_000), "--json",
            ])
            #expect(r.status == 0, "\(r.stderr)")
            return (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]) ?? [:]
        }
        for cam in ["gp", "gp2"] {
            #expect(
                try await nvr(["camera", "add", cam, "--plugin", "gopro", "--option", "base_url=\(sim.baseURL)"]).status
                    == 0)
        }

        // Older than retention keeps (half an hour, the file is an hour old): not fetched.
        #expect(try await nvr(["retention", "set", "--camera", "gp", "--continuous-days", "0.02"]).status == 0)
        var out = try await sync("gp")
        #expect(out["segments"] as? Int == 0 && out["gaps"] as? Int == 0, "\(out)")
        #expect(try await nvr(["retention", "set", "--camera", "gp", "--continuous-days", "none"]).status == 0)
        // At its size cap, the camera keeps its newest footage: the card's part from before its
        // oldest segment is not fetched (retention would delete it at once), and is once the
        // cap leaves room.
        let later = try await nvr([
            "card", "sync", "--camera", "gp", "--start", String(start90k + 10 * 90_000), "--end",
            String(end90k + 90_000), "--json",
        ])
        let laterOut = (try? JSONSerialization.jsonObject(with: Data(later.stdout.utf8)) as? [String: Any]) ?? [:]
        #expect(
            later.status == 0 && (laterOut["segments"] as? Int ?? 0) >= 1,
            "the newer half: \(later.stdout) \(later.stderr)")
        #expect(try await nvr(["retention", "set", "--camera", "gp", "--max-size", "1K"]).status == 0)
        out = try await sync("gp")
        #expect(
            out["segments"] as? Int == 0 && out["gaps"] as? Int == 0, "fetched only for retention to delete: \(out)")
        #expect(try await nvr(["retention", "set", "--camera", "gp", "--max-size", "none"]).status == 0)
        out = try await sync("gp")
        #expect((out["segments"] as? Int ?? 0) >= 1, "room under the cap again: \(out)")

        // Retention deletes it (a size cap): the next sync leaves it deleted.
        #expect(try await nvr(["retention", "set", "--camera", "gp", "--max-size", "1K"]).status == 0)
        let run = try await nvr(["retention", "run"])
        #expect(run.status == 0 && run.stdout.contains("deleted"), "\(run.stdout) \(run.stderr)")
        #expect(try await nvr(["retention", "set", "--camera", "gp", "--max-size", "none"]).status == 0)
        var served = sim.sim.stats.cardBytesServed
        out = try await sync("gp")
        #expect(out["segments"] as? Int == 0 && out["gaps"] as? Int == 0, "retention's deletion undone: \(out)")
        #expect(
            sim.sim.stats.cardBytesServed - served < 200_000,
            "video read again: \(sim.sim.stats.cardBytesServed - served) bytes")

        // A user deletes a range of the other camera: the next sync leaves it deleted too.
        out = try await sync("gp2")
        #expect((out["segments"] as? Int ?? 0) >= 1, "\(out)")
        let delete = try await nvr([
            "recordings", "delete", "--camera", "gp2", "--start", String(start90k - 90_000), "--end",
            String(end90k + 90_000), "--yes",
        ])
        #expect(delete.status == 0 && delete.stdout.contains("deleted"), "\(delete.stdout) \(delete.stderr)")
        served = sim.sim.stats.cardBytesServed
        out = try await sync("gp2")
        #expect(out["segments"] as? Int == 0 && out["gaps"] as? Int == 0, "the user's deletion undone: \(out)")
        #expect(
            sim.sim.stats.cardBytesServed - served < 200_000,
            "video read again: \(sim.sim.stats.cardBytesServed - served) bytes")
        let index = try IndexDatabase(path: root + "/data/index.sqlite")
        for cam in ["gp", "gp2"] {
            let id = try #require(try index.camera(named: cam)?.id)
            #expect(try index.segments(cameraID: id).isEmpty, "\(cam) has footage back")
        }

        // Firmware without the date endpoint: the JSON says the times are a guess, as the text does.
        sim.sim.fail("get_date_time", with: .status(404), count: 100)
        let noClock = try await nvr(["card", "sync", "--camera", "gp", "--list-only", "--json"])
        let listed = (try? JSONSerialization.jsonObject(with: Data(noClock.stdout.utf8)) as? [String: Any]) ?? [:]
        #expect(noClock.status == 0 && listed["clockOffsetSeconds"] == nil, "\(noClock.stdout) \(noClock.stderr)")
        #expect(
            (listed["warnings"] as? [String])?.contains { $0.contains("camera gave no clock") } == true, "\(listed)")
    }
}

/// The card from the page (Tests/Browser/card_test.py): listed, synced and a file downloaded
/// through `nvr serve`'s API, in Chromium.
@Suite(.serialized, .tags(.system)) struct CardPageTests {
    @Test func theCardListedSyncedAndDownloadedFromThePage() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: PageTests.python),
            "playwright is missing: run scripts/install-deps.sh test")
        let sim = try await GoProFixture { o in o.recordToCard = false }
        let (file, end) = try await CardSyncCommandTests.cardVideo(sim, name: "GH010021.MP4", seconds: 30)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int64)
        let s = try await TestEnvironment.blocking { try LiveChangeTests.Served() }
        // Disabled: no session, so nothing syncs the card but the page.
        let add = try s.api(
            "POST", "/api/cameras",
            json: #"{"name":"gp","plugin":"gopro","enabled":false,"options":{"base_url":"\#(sim.baseURL)"}}"#)
        #expect(add.status == 201, "\(add.body)")
        let shots = TestEnvironment.repoRoot + "/.build/test-screenshots"
        try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)
        let out = s.root + "/download"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let r = try await TestEnvironment.blocking {
            try runProcess(
                PageTests.python,
                [
                    TestEnvironment.repoRoot + "/Tests/Browser/card_test.py", "--base", "http://127.0.0.1:\(s.port)",
                    "--user", "boss", "--password", "correct horse", "--shots", shots, "--camera", "gp",
                    "--file", "GH010021.MP4", "--size", String(size), "--start", String(Int64(end - 30) * 90_000),
                    "--out", out,
                ])
        }
        print(r.stdout)
        #expect(
            r.status == 0,
            "the card failed in chromium:\n\(r.stdout)\n\(r.stderr.suffix(3000))\n\(s.logText.suffix(3000))")

        // The file route under a HEAD and a client that leaves mid-file: the server answers,
        // stops reading the card, and serves the whole file to the next client.
        let start90k = Int64(end - 30) * 90_000
        let listed = try s.api("GET", "/api/cameras/gp/card?start=\(start90k - 90_000)&end=\(start90k + 60 * 90_000)")
        let videos = (try? JSONSerialization.jsonObject(with: Data(listed.body.utf8)) as? [String: Any])?["videos"]
        let id = try #require((videos as? [[String: Any]])?.first?["file"] as? String, "\(listed.body)")
        let path =
            "/api/cameras/gp/card/file?file="
            + (id.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? id)
        let served0 = sim.sim.stats.cardBytesServed
        let head = try runProcess(
            "/usr/bin/curl",
            ["-s", "-I", "-H", "Authorization: Bearer \(s.token)", "http://127.0.0.1:\(s.port)\(path)"])
        #expect(head.stdout.hasPrefix("HTTP/1.1 200") && head.stdout.contains("GH010021.MP4"), "\(head.stdout)")
        #expect(sim.sim.stats.cardBytesServed == served0, "a HEAD read the card")
        // Each download reads on a thread of its own, which must end when its client leaves
        // (else it would wait 60 s for a reader that never comes).
        let threads = {
            ((try? String(contentsOfFile: "/proc/\(s.process.processIdentifier)/status", encoding: .utf8)) ?? "")
                .split(separator: "\n").first { $0.hasPrefix("Threads:") }.flatMap {
                    Int($0.dropFirst(8).trimmingCharacters(in: .whitespaces))
                } ?? -1
        }
        let before = threads()
        for _ in 0..<3 {
            let left = try runProcess(
                "/usr/bin/curl",
                [
                    "-s", "-o", "/dev/null", "--limit-rate", "200k", "--max-time", "0.5", "-H",
                    "Authorization: Bearer \(s.token)", "http://127.0.0.1:\(s.port)\(path)",
                ])
            #expect(left.status == 28, "curl should have given up mid-file: \(left.status)")
        }
        #expect(
            TestEnvironment.wait(timeout: 10) { threads() <= before },
            "nvr serve has \(threads()) threads after the clients left, \(before) before")
        let whole = s.root + "/whole.mp4"
        let full = try runProcess(
            "/usr/bin/curl",
            [
                "-s", "-o", whole, "-w", "%{http_code}", "-H", "Authorization: Bearer \(s.token)",
                "http://127.0.0.1:\(s.port)\(path)",
            ])
        let got = (try? FileManager.default.attributesOfItem(atPath: whole)[.size] as? Int64) ?? 0
        #expect(full.stdout == "200" && got == size, "\(full.stdout): \(got) of \(size) bytes")
        #expect(s.process.isRunning, "nvr serve ended: \(s.logText.suffix(2000))")
    }
}
