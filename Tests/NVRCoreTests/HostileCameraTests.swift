import Foundation
import NVRIndex
import NVRPlayback
import NVRTime
import TestSupport
import Testing

/// One `nvr serve` records a good GStreamer camera beside hostile ones (every mode of
/// Tests/Support/hostile_rtsp_camera.py): the process never dies, the good camera records
/// without a gap, the hostile ones fail with a reason (or record what is valid), memory and
/// CPU stay bounded, and SIGTERM stops it all within seconds.
@Suite(.serialized, .tags(.system)) struct HostileCameraTests {
    /// Modes whose valid video must still be recorded.
    static let recordable = [
        "good", "session-timeout-empty", "session-timeout-huge", "session-timeout-negative", "clock-rate-zero",
        "clock-rate-huge", "sps-huge-width", "sps-poc-cycle", "bad-sprop", "sizelength-negative",
        "sizelength-huge", "midstream-negative-length",
    ]
    /// Modes a client must give up on, and what the reason says.
    static let refused = [
        "negative-length": "Content-Length", "huge-length": "body of", "slow-describe": "no complete answer",
        "garbage": "not an RTSP answer", "broken-rtp": "no usable video", "endless-au": "no usable video",
    ]

    @Test func hostileCamerasNeitherStopNorStarveTheRecorder() throws {
        let root = TestEnvironment.tempDir("hostile")
        defer { TestEnvironment.cleanup(root) }
        let clip = try HostileCameraFixture.makeClip(in: root)
        let good = try RTSPCameraFixture()
        var hostile: [String: HostileCameraFixture] = [:]
        for mode in Self.recordable + Self.refused.keys.sorted() {
            hostile[mode] = try HostileCameraFixture(mode: mode, clip: clip)
        }
        defer { for camera in hostile.values { camera.stop() } }

        let httpPort = TestEnvironment.freePort()
        let config = try writeConfig(
            root: root, plugins: TestEnvironment.buildDir, segmentSeconds: 4, httpBind: "127.0.0.1:\(httpPort)")
        func add(_ name: String, _ url: String) throws {
            let r = try runProcess(
                TestEnvironment.nvrExecutable,
                ["camera", "add", name, "--plugin", "rtsp", "--url", url, "--config", config])
            #expect(r.status == 0, "\(name): \(r.stderr)")
        }
        try add("good", good.url)
        for (mode, cam) in hostile { try add("h-\(mode)", cam.url) }

        let log = root + "/serve.log"
        FileManager.default.createFile(atPath: log, contents: nil)
        let serve = Process()
        serve.executableURL = URL(fileURLWithPath: TestEnvironment.nvrExecutable)
        serve.arguments = ["serve", "--no-demo", "--config", config]
        serve.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        serve.standardOutput = serve.standardError
        try serve.run()
        defer {
            if serve.isRunning {
                kill(serve.processIdentifier, SIGKILL)
                serve.waitUntilExit()
            }
        }
        let logText = { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

        // Let every camera connect and misbehave, then measure 30 s of it.
        var peakRSS = 0
        for _ in 0..<10 {
            Thread.sleep(forTimeInterval: 1)
            peakRSS = max(peakRSS, processRSS(serve.processIdentifier))
        }
        let cpu0 = processCPUSeconds(serve.processIdentifier)
        let wall0 = Date()
        for _ in 0..<30 {
            try #require(serve.isRunning, "nvr serve died; log:\n\(logText().suffix(4000))")
            Thread.sleep(forTimeInterval: 1)
            peakRSS = max(peakRSS, processRSS(serve.processIdentifier))
        }
        let cpu = (processCPUSeconds(serve.processIdentifier) - cpu0) / Date().timeIntervalSince(wall0)
        #expect(serve.isRunning)
        print(
            "hostile cameras: nvr serve used \(String(format: "%.1f", cpu * 100)) % of a core, peak RSS \(peakRSS >> 20) MB"
        )
        // A spinning thread would be a whole core; recording 13 small streams is a few percent.
        #expect(cpu < 0.5, "nvr serve used \(Int(cpu * 100)) % of a core")
        #expect(peakRSS < 300 << 20, "peak RSS \(peakRSS >> 20) MB")

        // SIGTERM: every camera stops (open segments completed) within seconds.
        let stopAsked = Date()
        kill(serve.processIdentifier, SIGTERM)
        let stopped = TestEnvironment.wait(timeout: 15) { !serve.isRunning }
        #expect(stopped, "nvr serve still running 15 s after SIGTERM")
        #expect(Date().timeIntervalSince(stopAsked) < 10)

        let text = logText()
        #expect(!text.contains("Fatal error") && !text.contains("Crash"), "\(text.suffix(3000))")
        let storage = StorageLayout(root: root + "/Storage")
        let index = try IndexDatabase(path: storage.indexPath)
        // The good camera recorded the whole time, without a gap.
        let goodSegments = try index.segments(cameraID: try #require(try index.camera(named: "good")?.id))
        #expect(goodSegments.count >= 8, "\(goodSegments.count) segments")
        for (a, b) in zip(goodSegments, goodSegments.dropFirst()) {
            #expect(
                b.start90k - a.end90k < 90_000,
                "gap of \(Double(b.start90k - a.end90k) / 90_000) s in the good camera at \(Time90k.rfc3339(a.end90k))")
        }
        if let first = goodSegments.first, let last = goodSegments.last {
            #expect(
                last.end90k - first.start90k >= 35 * 90_000,
                "the good camera recorded \(Double(last.end90k - first.start90k) / 90_000) s")
        }
        for mode in Self.recordable {
            let id = try #require(try index.camera(named: "h-\(mode)")?.id)
            let frames = try index.segments(cameraID: id).reduce(0) { $0 + $1.frames }
            #expect(frames >= 100, "\(mode) recorded \(frames) frames; log: \(Self.lines(text, camera: "h-\(mode)"))")
        }
        for (mode, reason) in Self.refused {
            let lines = Self.lines(text, camera: "h-\(mode)")
            #expect(
                lines.contains { $0.contains("lost (") && $0.contains(reason) },
                "\(mode): expected '\(reason)' in \(lines)")
        }
        let check = try runProcess(TestEnvironment.nvrExecutable, ["db", "check", "--config", config])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
    }

    /// A camera whose RTP timestamps flip by 2^31 every frame after 3 s: frames keep arriving,
    /// almost none can be recorded, and the camera says so within 10 s — `stalled`, with the
    /// reason and the last frame recorded — in the API, the CLI and /metrics.
    @Test func aCameraWhoseTimestampsJumpSaysStalled() throws {
        let root = TestEnvironment.tempDir("stalled")
        defer { TestEnvironment.cleanup(root) }
        let clip = try HostileCameraFixture.makeClip(in: root)
        let jumping = try HostileCameraFixture(mode: "ts-jump", clip: clip)
        defer { jumping.stop() }
        let httpPort = TestEnvironment.freePort()
        let config = try writeConfig(
            root: root, plugins: TestEnvironment.buildDir, segmentSeconds: 4, httpBind: "127.0.0.1:\(httpPort)")
        let add = try runProcess(
            TestEnvironment.nvrExecutable,
            ["camera", "add", "jump", "--plugin", "rtsp", "--url", jumping.url, "--config", config])
        #expect(add.status == 0, "\(add.stderr)")
        let log = root + "/serve.log"
        FileManager.default.createFile(atPath: log, contents: nil)
        let serve = Process()
        serve.executableURL = URL(fileURLWithPath: TestEnvironment.nvrExecutable)
        serve.arguments = ["serve", "--no-demo", "--allow-unauthenticated", "--config", config]
        serve.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        serve.standardOutput = serve.standardError
        try serve.run()
        defer {
            if serve.isRunning {
                kill(serve.processIdentifier, SIGTERM)
                serve.waitUntilExit()
            }
        }
        let logText = { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        func camera() -> [String: Any] {
            guard let data = try? Data(contentsOf: URL(string: "http://127.0.0.1:\(httpPort)/api/cameras/jump")!) else {
                return [:]
            }
            return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        }
        #expect(
            TestEnvironment.wait(timeout: 20) { camera()["state"] as? String == "streaming" },
            "\(logText().suffix(2000))")
        // The camera streams 3 s of good video (45 frames), then its timestamps start jumping.
        let jumps = Date().addingTimeInterval(3)
        #expect(
            TestEnvironment.wait(timeout: 20) { camera()["state"] as? String == "stalled" },
            "\(camera()); \(logText().suffix(2000))")
        let after = Date().timeIntervalSince(jumps)
        #expect(after < 10, "stalled \(after) s after the timestamps began to jump")
        let state = camera()
        let reason = state["reason"] as? String ?? ""
        #expect(
            reason.contains("not recorded") && reason.contains("timestamps jump")
                && reason.contains("last frame recorded"), "\(reason)")
        #expect(state["lastFrame"] is String)
        // The CLI reads the state the index writer stores (committed within a flush or two).
        var list = ""
        #expect(
            TestEnvironment.wait(timeout: 5) {
                list =
                    (try? runProcess(TestEnvironment.nvrExecutable, ["camera", "list", "--config", config]).stdout)
                    ?? ""
                return list.contains("stalled")
            }, "\(list)")
        let metrics = String(
            decoding: (try? Data(contentsOf: URL(string: "http://127.0.0.1:\(httpPort)/metrics")!)) ?? Data(),
            as: UTF8.self)
        #expect(
            metrics.contains(#"nvr_camera_state{camera="jump",state="stalled"} 1"#),
            "\(metrics.split(separator: "\n").filter { $0.contains("jump") })")
        #expect(metrics.contains(#"nvr_camera_up{camera="jump"} 0"#))
    }

    static func lines(_ log: String, camera: String) -> [String] {
        log.split(separator: "\n").map(String.init).filter { $0.contains("camera \(camera):") }.suffix(6).map {
            String($0.prefix(300))
        }
    }
}
