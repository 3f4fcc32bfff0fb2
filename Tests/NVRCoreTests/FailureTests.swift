import Foundation
import NVRCameras
import NVRIndex
import NVRPluginHost
import NVRTime
import TestSupport
import Testing

/// Bad input gets a clear error and loses nothing.
@Suite(.serialized, .tags(.system)) struct FailureTests {
    /// A plugin folder with the real plugins plus broken ones compiled from C here.
    func pluginDirWithBrokenPlugins() throws -> String {
        let dir = TestEnvironment.tempDir("plugins")
        for name in ["rtsp", "demo"] {
            try FileManager.default.createSymbolicLink(
                atPath: "\(dir)/libnvr-plugin-\(name).so",
                withDestinationPath: "\(TestEnvironment.buildDir)/libnvr-plugin-\(name).so")
        }
        let header = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/CNVRPlugin/include").path
        // Speaks a future ABI.
        let future = """
            #include "nvr_plugin.h"
            static nvr_plugin_entry_v1 e = { 2, sizeof(nvr_plugin_entry_v1), "future", "9.0", "from the future", 1 };
            const nvr_plugin_entry_v1 *nvr_plugin_entry(void) { return &e; }
            """
        // A shared library that is not a plugin at all.
        let nosymbol = "int something_else(void) { return 1; }\n"
        for (name, src) in [("future", future), ("nosymbol", nosymbol)] {
            try src.write(toFile: "\(dir)/\(name).c", atomically: true, encoding: .utf8)
            let r = try runProcess(
                "/usr/bin/cc",
                ["-shared", "-fPIC", "-I", header, "-o", "\(dir)/libnvr-plugin-\(name).so", "\(dir)/\(name).c"])
            #expect(r.status == 0, "cc: \(r.stderr)")
        }
        return dir
    }

    @Test func brokenPluginsAreClearErrorsWhileOtherCamerasRecord() throws {
        let plugins = try pluginDirWithBrokenPlugins()
        defer { TestEnvironment.cleanup(plugins) }
        let cam = try RTSPCameraFixture()
        let h = try RecorderHarness(segmentSeconds: 2, pluginsDir: plugins)
        try h.add("good", ["url": cam.url])
        // Cameras whose plugins are missing or broken (added straight to the index, as if the
        // plugin had been removed or replaced after they were configured).
        for (name, plugin) in [("ghost", "nosuch"), ("future", "future"), ("nosym", "nosymbol")] {
            try h.index.addCamera(CameraRecord(name: name, plugin: plugin, config: "{}", created90k: Time90k.now()))
        }
        try h.recorder.start(addDemoIfEmpty: false)
        #expect(TestEnvironment.wait(timeout: 20) { ((try? h.completeSegments("good").count) ?? 0) >= 2 })
        let state = { (name: String) in h.recorder.session(named: name)?.status }
        #expect(state("ghost")?.state == .failed)
        #expect(
            state("ghost")?.reason?.contains("plugin 'nosuch' not found") == true,
            "\(String(describing: state("ghost")))")
        #expect(state("future")?.state == .failed)
        #expect(
            state("future")?.reason?.contains("speaks plugin ABI 2, this NVR speaks 1") == true,
            "\(String(describing: state("future")))")
        #expect(
            state("nosym")?.reason?.contains("has no nvr_plugin_entry symbol") == true,
            "\(String(describing: state("nosym")))")
        // The state is in the index too, for `nvr camera list`.
        h.recorder.writer.flush()
        let stored = try h.index.cameraState(cameraID: try h.camera("future").id!)
        #expect(stored?.state == "failed" && stored?.reason?.contains("ABI 2") == true)
        h.recorder.stop()
        #expect(try h.segments("ghost").isEmpty)

        // `nvr plugins` lists all of them, with the load errors.
        let r = try runProcess(
            TestEnvironment.nvrExecutable,
            ["plugins", "--json", "--config", try writeConfig(root: h.root, plugins: plugins)])
        #expect(r.status == 0)
        #expect(r.stdout.contains("\"name\" : \"rtsp\"") && r.stdout.contains("speaks plugin ABI 2"))
        #expect(r.stdout.contains("live-url"))
    }

    @Test func wrongPasswordAndDeadHostAreClearErrors() throws {
        var o = RTSPCameraFixture.Options()
        o.user = "admin"
        o.password = "secret"
        let cam = try RTSPCameraFixture(o)
        // The right password records.
        #expect(
            try CameraProbe.probe(
                source: LiveSource(url: cam.url(user: "admin", password: "secret"), options: ["rtsp_transport": "tcp"])
            ).codec == "h264")
        // Digest auth with a wrong password.
        #expect {
            try CameraProbe.probe(
                source: LiveSource(url: cam.url(user: "admin", password: "nope"), options: ["rtsp_transport": "tcp"]))
        } throws: { "\($0)".contains("authorization failed (wrong user or password)") && !"\($0)".contains("nope") }
        // Nothing listening.
        #expect {
            try CameraProbe.probe(source: LiveSource(url: "rtsp://127.0.0.1:9/stream"))
        } throws: { "\($0)".contains("connection refused") }

        // The CLI: one line on stderr, non-zero exit, password not echoed.
        let r = try runProcess(
            TestEnvironment.nvrExecutable, ["camera", "probe", "--url", cam.url(user: "admin", password: "nope")])
        #expect(r.status != 0)
        #expect(r.stderr.contains("authorization failed") && !r.stderr.contains("nope"))
        #expect(r.stderr.split(separator: "\n").count == 1, "stderr: \(r.stderr)")

        // A recording camera with the wrong password shows why in its state, and keeps retrying.
        let h = try RecorderHarness()
        try h.add("locked", ["url": cam.url, "user": "admin", "password": "nope"])
        try h.recorder.start(addDemoIfEmpty: false)
        let session = try #require(h.recorder.session(named: "locked"))
        #expect(TestEnvironment.wait(timeout: 10) { session.status.state == .lost })
        #expect(session.status.reason?.contains("authorization failed") == true, "\(session.status)")
        h.recorder.stop()
    }

    @Test func badCameraConfigsAreRefused() throws {
        let h = try RecorderHarness()
        let expectRefused = { (plugin: String, config: [String: String], text: String) in
            #expect { try h.add("x", plugin: plugin, config) } throws: { "\($0)".contains(text) }
        }
        expectRefused("rtsp", [:], "option 'url' is required")
        expectRefused("rtsp", ["url": "http://cam/x"], "is not an rtsp:// or rtsps:// URL")
        expectRefused("rtsp", ["url": "rtsp://cam/x", "transport": "carrier-pigeon"], "must be tcp or udp")
        expectRefused("rtsp", ["url": "rtsp://cam/x", "colour": "red"], "unknown option 'colour'")
        expectRefused("demo", ["width": "641"], "must be even")
        expectRefused("demo", ["fps": "0"], "'fps' must be a whole number")
        expectRefused("nosuch", [:], "plugin 'nosuch' not found")
        #expect { try h.add("../etc", ["url": "rtsp://cam/x"]) } throws: { "\($0)".contains("invalid camera name") }
        #expect(try h.index.cameras().isEmpty)
        // rtsps and credentials are accepted.
        try h.add("ok", ["url": "rtsps://cam.example:322/live", "user": "a b", "password": "p@ss"])
    }

    @Test func cliAddsListsAndRemovesCameras() throws {
        let root = TestEnvironment.tempDir("cli")
        defer { TestEnvironment.cleanup(root) }
        let config = try writeConfig(root: root, plugins: TestEnvironment.buildDir)
        let nvr = { (args: [String]) in try runProcess(TestEnvironment.nvrExecutable, args + ["--config", config]) }
        var r = try nvr([
            "camera", "add", "porch", "--plugin", "rtsp", "--url", "rtsp://192.0.2.7/ch1", "--option", "user=admin",
            "--option", "password=hunter2",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        r = try nvr(["camera", "add", "porch", "--plugin", "rtsp", "--url", "rtsp://192.0.2.7/ch1"])
        #expect(r.status != 0 && r.stderr.contains("already exists"))
        r = try nvr(["camera", "list", "--json"])
        #expect(r.stdout.contains("\"name\" : \"porch\"") && !r.stdout.contains("hunter2"))
        r = try nvr(["camera", "list"])
        #expect(r.stdout.contains("porch") && r.stdout.contains("never started"))
        r = try nvr(["recordings", "list", "--camera", "porch", "--start", "2026-01-01T00:00:00Z", "--end", "tomorrow"])
        #expect(r.status != 0 && r.stderr.contains("not RFC 3339"))
        r = try nvr(["camera", "remove", "porch"])
        #expect(r.status == 0 && r.stdout.contains("removed camera porch"))
        r = try nvr(["camera", "remove", "porch"])
        #expect(r.status != 0)
    }
}
