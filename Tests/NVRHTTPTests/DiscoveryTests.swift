import Foundation
import NVRIndex
import Testing
import TestSupport

/// Finding cameras on a network of the test's own (two network namespaces and a veth pair;
/// WS-Discovery multicasts never leave them): `nvr discover` finds the simulated ONVIF camera,
/// the line it prints adds it, `nvr serve` records it, and GET /api/discover then says it is
/// added.
@Suite(.serialized) struct DiscoveryTests {
    /// The test's network with an RTSP camera and the ONVIF simulator (answering WS-Discovery,
    /// its clock an hour behind) on the camera side, and an NVR config for the other side.
    final class Lab: @unchecked Sendable {
        // @unchecked Sendable: set up in init, then only read.
        let net: TestNetwork
        let rtsp: RTSPCameraFixture
        let onvif: ONVIFCameraFixture
        let root: String, config: String
        let port = 18_090
        var serve: Process?
        /// The Tuya simulator (camsim tuya), announcing itself every 5 s as devices do.
        let tuya: Process

        init() throws {
            net = try TestNetwork()
            var ro = RTSPCameraFixture.Options()
            ro.namespace = net.camera
            ro.host = net.cameraAddress
            rtsp = try RTSPCameraFixture(ro)
            var o = ONVIFCameraFixture.Options(mainURI: rtsp.url)
            o.namespace = net.camera
            o.address = net.cameraAddress
            o.discovery = true
            o.clockOffset = -3600
            onvif = try ONVIFCameraFixture(o)
            let broadcast = net.cameraAddress.split(separator: ".").dropLast().joined(separator: ".") + ".255"
            tuya = net.process(in: net.camera, TestEnvironment.buildDir + "/camsim",
                               ["tuya", "--port", "8083", "--lan-port", "6668", "--announce", broadcast, "--announce-ip", net.cameraAddress])
            tuya.standardOutput = FileHandle.nullDevice
            tuya.standardError = FileHandle.nullDevice
            try tuya.run()
            root = TestEnvironment.tempDir("discover")
            config = try writeConfig(root: root, plugins: TestEnvironment.buildDir, segmentSeconds: 2, httpBind: "127.0.0.1:\(port)")
            let admin = try LiveChangeTests.Served.nvr(["user", "add", "boss", "--role", "admin", "--config", config], stdin: "correct horse\n")
            guard admin.status == 0 else { throw FixtureError("user add: \(admin.stderr)") }
        }

        deinit {
            if let s = serve, s.isRunning { s.terminate(); s.waitUntilExit() }
            onvif.stop()
            rtsp.stop()
            if tuya.isRunning { tuya.terminate(); tuya.waitUntilExit() }
            TestEnvironment.cleanup(root)
        }

        var log: String { root + "/serve.log" }
        var logText: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

        /// `nvr serve` on the NVR's side of the network.
        func startServing() throws {
            FileManager.default.createFile(atPath: log, contents: nil)
            let s = net.process(in: net.nvr, TestEnvironment.nvrExecutable, ["serve", "--no-demo", "--config", config])
            s.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            s.standardOutput = s.standardError
            try s.run()
            serve = s
            guard TestEnvironment.wait(timeout: 20, { self.logText.contains("listening on") }) else {
                throw FixtureError("nvr serve did not start: \(logText)")
            }
        }
    }

    @Test func anONVIFCameraIsFoundAddedWithThePrintedLineAndRecorded() async throws {
        let lab = try Lab()
        let net = lab.net, onvif = lab.onvif, root = lab.root, config = lab.config, port = lab.port
        let nvr = TestEnvironment.nvrExecutable
        func discover(_ args: [String]) throws -> ProcessResult {
            try net.run(in: net.nvr, nvr, ["discover", "--seconds", "2", "--config", config] + args)
        }

        // What answered, as JSON (6 s: the Tuya device announces itself every 5 s).
        let found = try net.run(in: net.nvr, nvr, ["discover", "--seconds", "6", "--json", "--config", config])
        #expect(found.status == 0, "\(found.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(found.stdout.utf8)) as? [String: Any], "\(found.stdout)")
        let cameras = report["found"] as? [[String: Any]] ?? []
        let cam = try #require(cameras.first { $0["plugin"] as? String == "onvif" }, "\(found.stdout)")
        #expect(cam["address"] as? String == onvif.address)
        #expect(cam["name"] as? String == "SimCam-1" && cam["model"] as? String == "SIM-1")
        #expect((cam["id"] as? String)?.hasPrefix("urn:uuid:") == true)
        #expect(cam["addedAs"] == nil)
        #expect(report["plugins"] as? [String] == ["onvif", "tuya"])
        let device = try #require(cameras.first { $0["plugin"] as? String == "tuya" }, "\(found.stdout)")
        #expect(device["address"] as? String == net.cameraAddress && device["id"] as? String == "bf12ab34cd56ef78gh90ij")
        #expect(device["options"] as? [String: String] == ["device_id": "bf12ab34cd56ef78gh90ij", "lan_host": net.cameraAddress, "lan_version": "3.3"])
        #expect((device["addCommand"] as? String)?.contains("--option local_key=LOCAL_KEY") == true, "\(device)")

        // For people: a table and the line to add it.
        let text = try discover([])
        #expect(text.status == 0 && text.stdout.contains("SimCam-1"), "\(text.stdout)\(text.stderr)")
        let line = try #require(text.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.first { $0.hasPrefix("nvr camera add") },
                                "\(text.stdout)")
        #expect(line == "nvr camera add simcam-1 --plugin onvif --option address=\(onvif.address) --option user=USER --option password=PASSWORD")
        let args = line.replacingOccurrences(of: "USER", with: "admin").replacingOccurrences(of: "PASSWORD", with: "secret")
            .split(separator: " ").dropFirst().map { String($0) }
        let added = try runProcess(nvr, args + ["--config", config])
        #expect(added.status == 0, "\(added.stdout)\(added.stderr)")

        // Served on the NVR's side of the network, it records the camera it was given.
        let token = try runProcess(nvr, ["token", "add", "--user", "boss", "--name", "t", "--quiet", "--config", config])
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try lab.startServing()
        let index = try IndexDatabase(path: root + "/Storage/index.sqlite")
        #expect(await TestEnvironment.eventually(timeout: 30) { ((try? index.segments(state: .complete)) ?? []).contains { $0.frames > 0 } },
                "the found camera records:\n\(lab.logText)")

        // The page's view of the same: the camera is now marked as added.
        let api = try net.run(in: net.nvr, "/usr/bin/curl", ["-s", "-H", "Authorization: Bearer \(token)", "http://127.0.0.1:\(port)/api/discover?seconds=2"])
        let answer = try JSONSerialization.jsonObject(with: Data(api.stdout.utf8)) as? [String: Any]
        let listed = (answer?["found"] as? [[String: Any]])?.first { $0["plugin"] as? String == "onvif" }
        #expect(listed?["addedAs"] as? String == "simcam-1", "\(api.stdout)")
        let viewer = try net.run(in: net.nvr, "/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/api/discover"])
        #expect(viewer.stdout == "401")
        let bad = try net.run(in: net.nvr, "/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer \(token)",
                                                             "http://127.0.0.1:\(port)/api/discover?seconds=999"])
        #expect(bad.stdout == "400")
    }

    /// The page: an admin finds the camera under "Add cameras", adds it with its password,
    /// and it streams in the grid (chromium runs on the NVR's side of the network too).
    @Test func thePageFindsAndAddsTheCamera() throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"), "chromium is missing: run scripts/install-deps.sh test")
        let lab = try Lab()
        try lab.startServing()
        let shots = TestEnvironment.repoRoot + "/.build/test-screenshots"
        try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)
        let r = try lab.net.run(in: lab.net.nvr, PageTests.python, [
            TestEnvironment.repoRoot + "/Tests/Browser/discover_test.py", "--base", "http://127.0.0.1:\(lab.port)", "--user", "boss",
            "--password", "correct horse", "--address", lab.onvif.address, "--camera-user", "admin", "--camera-password", "secret",
            "--shots", shots])
        print(r.stdout)
        #expect(r.status == 0, "the page failed in chromium:\n\(r.stdout)\n\(r.stderr.suffix(3000))\n\(lab.logText.suffix(2000))")
    }

    @Test func nothingToFindIsSaidPlainly() throws {
        let net = try TestNetwork()
        let root = TestEnvironment.tempDir("discover-none")
        defer { TestEnvironment.cleanup(root) }
        let config = try writeConfig(root: root, plugins: TestEnvironment.buildDir)
        let r = try net.run(in: net.nvr, TestEnvironment.nvrExecutable, ["discover", "--seconds", "1", "--config", config])
        #expect(r.status == 0 && r.stdout.hasPrefix("nothing answered in 1 s (looked with: onvif, tuya)"), "\(r.stdout)\(r.stderr)")
        let bad = try runProcess(TestEnvironment.nvrExecutable, ["discover", "--seconds", "0", "--config", config])
        #expect(bad.status != 0 && bad.stderr.contains("--seconds must be between 0.5 and 30"), "\(bad.stderr)")
    }
}
