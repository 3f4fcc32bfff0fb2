import CamSim
import Foundation
import NVRIndex
import NVRPlayback
import NVRRecorder
import NVRTime
import TestSupport
import Testing

/// A GoPro end to end against the simulator: live preview over UDP MPEG-TS, the camera's
/// state in the API and CLI, keep-alives, restarts after silence, bad answers, and a Wi-Fi
/// loss whose gap is filled from the card.
@Suite(.serialized, .tags(.system)) struct GoProRecordingTests {
    /// A recorder with one GoPro camera on the simulator, and the HTTP API over it.
    struct Setup {
        let sim: GoProFixture
        let harness: RecorderHarness
        let server: TestServer

        /// `previewSize`: the preview's own size (the card records at the simulator's 640x360
        /// otherwise, or `cardSize`), as a real GoPro's 480p preview of a 720p+ recording.
        init(chapterSeconds: Int = 10, cardSize: (Int, Int)? = nil, previewSize: (Int, Int)? = nil) async throws {
            sim = try await GoProFixture { o in
                o.chapterSeconds = chapterSeconds
                if let c = cardSize {
                    o.width = c.0
                    o.height = c.1
                }
                if let p = previewSize {
                    o.previewWidth = p.0
                    o.previewHeight = p.1
                }
            }
            harness = try RecorderHarness(segmentSeconds: 3) { $0.cardRefreshSeconds = 5 }
            try harness.add(
                "gp", plugin: "gopro",
                [
                    "base_url": sim.baseURL, "port": String(GoProFixture.freeUDPPort()),
                    "http_timeout": "2", "busy_wait_seconds": "2",
                ])
            try harness.recorder.start(addDemoIfEmpty: false)
            server = try await TestServer(
                index: harness.index, storage: harness.recorder.storage, recorder: harness.recorder)
        }

        var session: CameraSession? { harness.recorder.session(named: "gp") }

        func segments() throws -> [SegmentRecord] { try harness.segments("gp") }

        /// The runs recorded so far: a reconnect always starts a new one.
        func runs() throws -> Set<Int64> { Set(try segments().map(\.runID)) }

        /// True once a live run that is not in `before` has recorded frames (backfill makes runs too).
        func hasNewRun(_ before: Set<Int64>) throws -> Bool {
            try segments().contains { !before.contains($0.runID) && $0.frames > 0 && $0.source == "live" }
        }

        /// Waits until the camera's state reason mentions `text`; returns the "state: reason"s seen.
        func reason(containing text: String, timeout: Double = 45) async throws -> [String] {
            var seen: [String] = []
            let end = Date(timeIntervalSinceNow: timeout)
            while Date() < end {
                if let status = session?.status, let r = status.reason, seen.last != "\(status.state.rawValue): \(r)" {
                    seen.append("\(status.state.rawValue): \(r)")
                }
                if seen.last?.contains(text) == true { break }
                try await Task.sleep(nanoseconds: 100_000_000)
            }
            return seen
        }

        /// Waits for the camera to stream again: a new run with frames.
        func recordsAgain(after before: Set<Int64>, timeout: Double = 40) async throws -> Bool {
            try await TestEnvironment.eventually(timeout: timeout) { try hasNewRun(before) }
        }
    }

    @Test func recordsLiveShowsStatusKeepsAliveAndRecoversFromSilenceAndBadAnswers() async throws {
        let s = try await Setup()
        #expect(
            try await TestEnvironment.eventually(timeout: 30) { try s.harness.completeSegments("gp").count >= 2 },
            "live segments")
        let first = try #require(try s.harness.completeSegments("gp").first)
        let probed = try ffprobeStreams(s.harness.path(first))
        #expect(
            probed.first?.codec == "h264" && (probed.first?.frames ?? 0) >= 60,
            "a 3 s segment of the 30 fps preview: \(probed)")

        // The camera's state, through the plugin, in the API and in `nvr camera list`.
        #expect(
            await TestEnvironment.eventually(timeout: 10) {
                s.session?.pluginInstance?.status()?.contains("\"stream\":\"streaming\"") == true
            })
        let cam = try await s.server.get("/api/cameras/gp").json
        let camera = try #require(cam["camera"] as? [String: Any], "\(cam)")
        #expect(
            camera["battery_percent"] as? Int == 87 && camera["sd"] as? String == "ok"
                && camera["encoding"] as? Bool == true)
        #expect((camera["summary"] as? String)?.contains("battery 87 %") == true)
        #expect(cam["state"] as? String == "streaming")
        let config = s.harness.root + "/nvr.toml"
        try "[storage]\nroot = \"\(s.harness.root)\"\n[plugins]\ndir = \"\(TestEnvironment.buildDir)\"\n".write(
            toFile: config, atomically: true, encoding: .utf8)
        let list = try await TestEnvironment.blocking {
            try runProcess(TestEnvironment.nvrExecutable, ["camera", "list", "--config", config])
        }
        #expect(list.status == 0 && list.stdout.contains("battery 87 %, SD ok"), "\(list.stdout) \(list.stderr)")

        // Keep-alive every 3 s.
        let k0 = s.sim.sim.stats.keepAlives
        try await Task.sleep(nanoseconds: 9_500_000_000)
        let alive = s.sim.sim.stats.keepAlives - k0
        #expect((2...5).contains(alive), "\(alive) keep-alives in 9.5 s")

        // A snapshot from the live stream, through the core's snapshot path.
        let snap = try await s.server.get("/api/cameras/gp/snapshot.jpg")
        #expect(
            snap.status == 200 && snap.header("Content-Type") == "image/jpeg" && snap.body.starts(with: [0xFF, 0xD8]))

        // 3 s of silence: the stream is stopped and started again, and recording goes on.
        let starts = s.sim.sim.stats.streamStarts
        var mark = try s.runs()
        s.sim.sim.stallStream(seconds: 6)
        #expect(
            await TestEnvironment.eventually(timeout: 20) { s.sim.sim.stats.streamStarts > starts },
            "the stream is restarted")
        #expect(try await s.recordsAgain(after: mark), "recording resumes after the silence")

        // HTTP 500 and a malformed answer: clear reasons, retries, no crash.
        mark = try s.runs()
        s.sim.sim.fail("stream_start", with: .status(500), count: 2)
        s.sim.sim.stallStream(seconds: 4)
        var seen = try await s.reason(containing: "camera answered HTTP 500 to /gopro/camera/stream/start")
        #expect(seen.last?.contains("HTTP 500") == true, "\(seen)")
        // A camera's server error is the camera's trouble, not a configuration to fix: lost.
        #expect(seen.last?.hasPrefix("lost: ") == true, "\(seen)")
        #expect(try await s.recordsAgain(after: mark), "recording resumes after the errors")

        mark = try s.runs()
        s.sim.sim.fail("state", with: .malformedJSON, count: 3)
        s.sim.sim.stallStream(seconds: 4)
        seen = try await s.reason(containing: "malformed JSON from /gopro/camera/state")
        #expect(seen.last?.contains("malformed JSON") == true, "\(seen)")
        #expect(try await s.recordsAgain(after: mark))

        // A busy camera: the plugin waits (here 2 s), says so, and the host retries.
        mark = try s.runs()
        s.sim.sim.setBusy(seconds: 10)
        s.sim.sim.stallStream(seconds: 4)
        seen = try await s.reason(containing: "camera is busy (status 8)")
        #expect(seen.last?.contains("busy") == true, "\(seen)")
        #expect(try await s.recordsAgain(after: mark))
        #expect(await TestEnvironment.eventually(timeout: 5) { s.session?.status.state == .streaming })
    }

    /// SIGTERM to `nvr serve` while a GoPro streams: libavformat's MPEG-TS reader hands back
    /// the half-received frame it was assembling when the read is interrupted; it must not be
    /// recorded (it ended every such segment with "Invalid level prefix" in the decoder).
    @Test func stoppingMidStreamRecordsNoHalfFrame() async throws {
        let sim = try await GoProFixture()
        let root = TestEnvironment.tempDir("gopro-stop")
        defer { TestEnvironment.cleanup(root) }
        let config = try writeConfig(
            root: root, plugins: TestEnvironment.buildDir, segmentSeconds: 60,
            httpBind: "127.0.0.1:\(TestEnvironment.freePort())")
        let add = try await TestEnvironment.blocking {
            try runProcess(
                TestEnvironment.nvrExecutable,
                [
                    "camera", "add", "gp", "--plugin", "gopro", "--option", "base_url=\(sim.baseURL)",
                    "--option", "port=\(GoProFixture.freeUDPPort())", "--config", config,
                ])
        }
        #expect(add.status == 0, "\(add.stderr)")
        for round in 0..<2 {
            let serve = Process()
            serve.executableURL = URL(fileURLWithPath: TestEnvironment.nvrExecutable)
            serve.arguments = ["serve", "--no-demo", "--config", config]
            serve.standardOutput = FileHandle.nullDevice
            serve.standardError = FileHandle.nullDevice
            try serve.run()
            try await Task.sleep(nanoseconds: UInt64(6_300_000_000 + round * 1_700_000_000))
            serve.terminate()
            try await TestEnvironment.blocking { serve.waitUntilExit() }
            let index = try IndexDatabase(path: root + "/Storage/index.sqlite")
            let cameraID = try #require(try index.camera(named: "gp")?.id)
            let last = try #require(try index.segments(cameraID: cameraID).last, "round \(round)")
            #expect(last.state == .complete && last.frames > 30, "round \(round): \(last)")
            let file = root + "/Storage/" + last.path
            let errors = try await TestEnvironment.blocking { try decodeErrors(file) }
            #expect(errors.isEmpty, "round \(round): the segment open at SIGTERM: \(errors)")
        }
    }

    @Test func wifiLossIsFilledFromTheCardAndPlaysAcross() async throws {
        // As on a real GoPro, the preview (480p) and the card (720p) differ: every seam changes
        // the picture's size and parameter sets.
        let s = try await Setup(cardSize: (1280, 720), previewSize: (848, 480))
        #expect(try await TestEnvironment.eventually(timeout: 30) { try s.harness.completeSegments("gp").count >= 3 })
        let lossStart = Time90k.now()
        s.sim.sim.setWiFi(up: false)
        try await Task.sleep(nanoseconds: 60_000_000_000)
        let before = try s.runs()
        s.sim.sim.setWiFi(up: true)
        let lossEnd = Time90k.now()
        #expect(try await s.recordsAgain(after: before, timeout: 60), "live recording resumes")
        let resumed = try #require(try s.segments().first { $0.start90k > lossEnd && $0.source == "live" }).start90k
        // The plugin says the camera is back as soon as its keep-alive is answered; the session
        // reconnects then, not when its backoff (30 s by now) runs out.
        #expect(
            Double(resumed - lossEnd) / 90_000 < 8,
            "live again \(Double(resumed - lossEnd) / 90_000) s after the Wi-Fi returned")
        let from = try #require(try s.segments().first).start90k

        // Once the card chapters covering the loss are closed and listed, the gap fills.
        var slices: [[String: Any]] = []
        let filled = try await TestEnvironment.eventually(timeout: 60) {
            let t = try s.harness.index.timelineSpans(
                cameraID: try s.harness.camera("gp").id!, start90k: from, end90k: resumed + 90_000)
            let nvr = Timeline.slices(t, within: from..<(resumed + 90_000))
            return zip(nvr, nvr.dropFirst()).allSatisfy { $1.start90k - $0.end90k <= Timeline.joinTolerance90k }
                && nvr.contains { $0.source == .card && $0.duration90k >= 55 * 90_000 }
        }
        let answer = try await s.server.get("/api/cameras/gp/timeline?start=\(from)&end=\(resumed + 90_000)")
        slices = answer.json["slices"] as? [[String: Any]] ?? []
        #expect(filled, "timeline continuous with a card slice over the loss: \(slices)")
        let card = slices.filter { $0["source"] as? String == "card" && $0["location"] as? String == "nvr" }
        let covering = card.first {
            ($0["start90k"] as! Int64) <= lossStart + 5 * 90_000 && ($0["end90k"] as! Int64) >= lossEnd - 5 * 90_000
        }
        #expect(
            covering != nil,
            "a card slice spans the Wi-Fi loss \(Time90k.rfc3339(lossStart))–\(Time90k.rfc3339(lossEnd)): \(slices)")
        #expect(try s.segments().filter { $0.source == "card" }.allSatisfy { $0.state == .complete })

        // One MP4 across live, card and live footage plays cleanly and has no gap.
        let a = lossStart - 5 * 90_000
        let b = resumed + 90_000 / 2
        let view = try await s.server.get("/api/cameras/gp/view.mp4?start=\(a)&end=\(b)")
        #expect(view.status == 200)
        let dump = try s.segments().map { "\($0.runID)/\($0.source)/\($0.state.rawValue) \($0.start90k)-\($0.end90k)" }
            .joined(separator: "\n")
        #expect(
            view.header("X-Recording-Gaps") == nil || view.header("X-Recording-Gaps") == "",
            "\(view.header("X-Recording-Gaps") ?? "") in \(a)-\(b); resumed \(resumed)\n\(dump)")
        #expect(view.header("X-Recording-Truncated90k") == nil, "the preview and card sizes play as one file")
        let file = s.harness.root + "/across.mp4"
        try view.body.write(to: URL(fileURLWithPath: file))
        let errors = try await TestEnvironment.blocking { try decodeErrors(file) }
        #expect(errors.isEmpty, "\(errors)")
        let sizes = try await TestEnvironment.blocking {
            try runProcess(
                "/usr/bin/ffprobe",
                [
                    "-v", "error", "-select_streams", "v", "-show_entries", "frame=width,height", "-of", "csv=p=0:s=x",
                    file,
                ]
            )
            .stdout.split(separator: "\n").map { String($0.trimmingCharacters(in: CharacterSet(charactersIn: "x \r"))) }
        }
        var shown: [String] = []
        for size in sizes where shown.last != size { shown.append(size) }
        #expect(shown == ["848x480", "1280x720", "848x480"], "live preview, card, live preview: \(shown)")
        let probed = try await TestEnvironment.blocking { try ffprobeStreams(file) }
        let seconds = Double(b - a) / 90_000
        #expect(abs((probed.first?.duration ?? 0) - seconds) < 0.5, "\(probed) for \(seconds) s")
        // Runs meet at key frames: each seam (live → card, card → card from a later sync,
        // card → live) may miss up to one GOP (15 frames of the simulator's 0.5 s GOP).
        let seams = Set(try s.segments().filter { $0.end90k > a && $0.start90k < b }.map(\.runID)).count - 1
        #expect(
            abs(Double(probed.first?.frames ?? 0) - seconds * 30) < 30 + 15 * Double(seams),
            "about 30 frames a second throughout, \(seams) seams: \(probed)")
    }
}
