import Foundation
import NVRIndex
import NVRIndexPostgres
import NVRTime
import TestSupport
import Testing

/// The whole NVR on a PostgreSQL index, as an installer sets it up: `[index] url` and a
/// password file in nvr.toml, cameras added with `nvr camera add`, `nvr serve` recording,
/// playback over HTTP, a `kill -9` recovered, `nvr db check` clean. The password shows up in
/// no output.
@Suite(.serialized, .tags(.system)) struct PostgresServeTests {
    @Test func recordsPlaysAndRecoversOnPostgreSQL() throws {
        let password = "pg-Secret-77"
        let server = try PostgresFixture(password: password)
        let url = try server.makeDatabase()
        let cam = try RTSPCameraFixture()
        let root = TestEnvironment.tempDir("pgserve")
        defer { TestEnvironment.cleanup(root) }
        let port = TestEnvironment.freePort()
        let config = try writeConfig(
            root: root, plugins: TestEnvironment.buildDir, segmentSeconds: 3, httpBind: "127.0.0.1:\(port)")
        try password.write(toFile: root + "/index-password", atomically: true, encoding: .utf8)
        try append("[index]\nurl = \"\(url)\"\npassword_file = \"index-password\"\n", to: config)
        func nvr(_ args: String...) throws -> ProcessResult {
            try runProcess(TestEnvironment.nvrExecutable, args + ["--config", config])
        }
        let add = try nvr("camera", "add", "cam", "--plugin", "rtsp", "--url", cam.url)
        #expect(add.status == 0, "\(add.stderr)")
        #expect(try nvr("retention", "set", "--min-free", "0%").status == 0)
        // Nothing in the storage root: the camera is in PostgreSQL.
        #expect(!FileManager.default.fileExists(atPath: root + "/Storage/index.sqlite"))
        let index = try PostgresIndex(
            location: try PostgresLocation(url: url, passwordFile: root + "/index-password", environment: [:]))
        let camID = try #require(try index.camera(named: "cam")?.id)

        let log = root + "/serve.log"
        let serve = try startServe(config, log: log)
        func logText() -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        let recorded = TestEnvironment.wait(timeout: 40) {
            ((try? index.segments(cameraID: camID)) ?? []).filter { $0.state == .complete }.count >= 2
        }
        #expect(recorded, "no complete segments in PostgreSQL; log: \(logText())")
        #expect(logText().contains("index postgresql://nvr@127.0.0.1:\(server.port)/"))

        // Playback over HTTP, with a token made by the CLI (against PostgreSQL too).
        let token = try nvr("token", "add", "--user", "admin", "--name", "pg", "--quiet")
        #expect(token.status == 0, "\(token.stderr)")
        let bearer = token.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let segments = try index.segments(cameraID: camID).filter { $0.state == .complete }
        let start = try #require(segments.first).start90k
        let end = try #require(segments.last).end90k
        let timeline = try httpGet(port: port, "/api/cameras/cam/timeline?start=\(start)&end=\(end)", token: bearer)
        #expect(
            timeline.stdout.hasSuffix("\n200") && timeline.stdout.contains("\(start)"),
            "\(timeline.stdout) \(timeline.stderr)")
        let mp4 = root + "/view.mp4"
        let view = try httpGet(
            port: port, "/api/cameras/cam/view.mp4?start=\(start)&end=\(end)", token: bearer, to: mp4)
        #expect(view.stdout.hasSuffix("200"), "\(view.stdout) \(view.stderr)")
        let frames = try h264Frames(mp4)
        #expect(frames >= segments.reduce(0) { $0 + $1.frames } && frames > 0, "\(frames) frames")

        // kill -9 mid-segment; the restart finishes the segment it left in PostgreSQL.
        // Killed 1.7 s into a new segment: a fragment or more is on disk (one a second at least).
        let before = try index.segments(cameraID: camID).compactMap(\.id).max() ?? 0
        #expect(
            TestEnvironment.wait(timeout: 10) {
                ((try? index.segments(state: .writing)) ?? []).contains { $0.cameraID == camID && $0.id ?? 0 > before }
            })
        Thread.sleep(forTimeInterval: 1.7)
        kill(serve.processIdentifier, SIGKILL)
        serve.waitUntilExit()
        let crashed = try #require(try index.segments(state: .writing).first { $0.cameraID == camID })
        let again = try startServe(config, log: log)
        #expect(
            TestEnvironment.wait(timeout: 20) {
                (try? index.segments(state: .writing).contains { $0.id == crashed.id }) == false
            })
        #expect(
            TestEnvironment.wait(timeout: 20) {
                ((try? index.segments(cameraID: camID)) ?? []).count > segments.count + 1
            })
        kill(again.processIdentifier, SIGINT)
        again.waitUntilExit()
        #expect(again.terminationStatus == 0, "\(logText())")
        #expect(logText().contains("recovery: finished segment"))

        let check = try nvr("db", "check")
        #expect(
            check.status == 0 && check.stdout.contains("ok: index and files agree"), "\(check.stdout)\(check.stderr)")
        #expect(!logText().contains(password) && !check.stdout.contains(password) && !add.stderr.contains(password))
    }

    /// PostgreSQL stopped for 30 s (SIGKILL, as a crash) while a camera records: the recording
    /// goes on into its files, the index writer keeps the rows and writes them once PostgreSQL
    /// is back; the index then has every segment, end to end, without a hole.
    @Test func aThirtySecondOutageOfPostgreSQLLeavesNoHole() throws {
        let server = try PostgresFixture()
        let url = try server.makeDatabase()
        let cam = try RTSPCameraFixture(.small())
        let root = TestEnvironment.tempDir("pgout")
        defer { TestEnvironment.cleanup(root) }
        let config = try writeConfig(
            root: root, plugins: TestEnvironment.buildDir, segmentSeconds: 3,
            httpBind: "127.0.0.1:\(TestEnvironment.freePort())")
        try append("[index]\nurl = \"\(url)\"\n", to: config)
        let add = try runProcess(
            TestEnvironment.nvrExecutable,
            ["camera", "add", "cam", "--plugin", "rtsp", "--url", cam.url, "--config", config])
        #expect(add.status == 0, "\(add.stderr)")
        _ = try runProcess(TestEnvironment.nvrExecutable, ["retention", "set", "--min-free", "0%", "--config", config])
        let index = try PostgresIndex(location: try PostgresLocation(url: url, environment: [:]))
        let camID = try #require(try index.camera(named: "cam")?.id)
        let log = root + "/serve.log"
        let serve = try startServe(config, log: log)
        func logText() -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        #expect(
            TestEnvironment.wait(timeout: 30) {
                ((try? index.segments(cameraID: camID)) ?? []).filter { $0.state == .complete }.count >= 2
            }, "\(logText())")

        server.stop()
        let down = Time90k.now()
        Thread.sleep(forTimeInterval: 30)
        try server.start()
        let up = Time90k.now()
        // Rows of the outage arrive, and recording goes on after it.
        let caughtUp = TestEnvironment.wait(timeout: 30) {
            ((try? index.segments(cameraID: camID)) ?? []).contains { $0.state == .complete && $0.start90k > up }
        }
        #expect(caughtUp, "\(logText())")
        kill(serve.processIdentifier, SIGINT)
        serve.waitUntilExit()
        let segs = try index.segments(cameraID: camID).sorted { $0.start90k < $1.start90k }
        #expect(segs.allSatisfy { $0.state == .complete }, "\(segs.map(\.state))")
        #expect(
            segs.contains { $0.start90k > down + 5 * 90_000 && $0.end90k < up }, "segments recorded during the outage")
        var worst: Int64 = 0
        for (a, b) in zip(segs, segs.dropFirst()) { worst = max(worst, b.start90k - a.end90k) }
        print("outage: \(segs.count) segments, the largest gap between two is \(Double(worst) / 90_000) s")
        #expect(worst <= 90_000 / 2, "a hole of \(Double(worst) / 90_000) s; \(logText().suffix(3000))")
        let check = try runProcess(TestEnvironment.nvrExecutable, ["db", "check", "--config", config])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
    }

    /// A wrong password, or no server, is one line from `nvr`, not a crash or a hang.
    @Test func anUnreachableIndexIsOneLine() throws {
        let server = try PostgresFixture(password: "right")
        let url = try server.makeDatabase()
        let root = TestEnvironment.tempDir("pgbad")
        defer { TestEnvironment.cleanup(root) }
        let config = try writeConfig(root: root, plugins: TestEnvironment.buildDir)
        try append("[index]\nurl = \"\(url)\"\n", to: config)
        var env = ProcessInfo.processInfo.environment
        env["NVR_INDEX_PASSWORD"] = "wrong"
        let wrong = try runProcess(
            TestEnvironment.nvrExecutable, ["camera", "list", "--config", config], environment: env)
        #expect(wrong.status != 0 && wrong.stderr.contains("cannot reach the index at \(url)"), "\(wrong.stderr)")
        let said = wrong.stderr.split(separator: "\n").filter { $0.contains("index") && !$0.contains("storage root") }
        #expect(said.count == 1 && said[0].contains("password authentication failed"), "\(wrong.stderr)")
        #expect(!wrong.stderr.contains("wrong"), "the password given is never said")
        server.stop()
        env["NVR_INDEX_PASSWORD"] = "right"
        let down = try runProcess(
            TestEnvironment.nvrExecutable, ["camera", "list", "--config", config], environment: env)
        #expect(down.status != 0 && down.stderr.contains("cannot reach the index at \(url)"), "\(down.stderr)")
    }
}
