import Foundation
import NVRIndex
import TestSupport
import Testing

/// Finding cameras on a network of the test's own (two network namespaces and a veth pair;
/// WS-Discovery multicasts never leave them): `nvr discover` finds the simulated ONVIF camera,
/// the line it prints adds it, `nvr serve` records it, and GET /api/discover then says it is
/// added.
@Suite(.serialized, .tags(.system)) struct DiscoveryTests {
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
        /// The GoPro simulator (camsim gopro) on the camera side, announced by mDNS as
        /// C3501324500789._gopro-web._tcp.local. through python-zeroconf (an independent responder).
        let gopro: Process, goproMDNS: Process
        static let goproSerial = "C3501324500789"

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
            tuya = net.process(
                in: net.camera, TestEnvironment.buildDir + "/camsim",
                [
                    "tuya", "--port", "8083", "--lan-port", "6668", "--announce", broadcast, "--announce-ip",
                    net.cameraAddress,
                ])
            tuya.standardOutput = FileHandle.nullDevice
            tuya.standardError = FileHandle.nullDevice
            try tuya.run()
            gopro = net.process(
                in: net.camera, TestEnvironment.buildDir + "/camsim",
                [
                    "gopro", "--address", net.cameraAddress, "--port", "8080", "--no-record", "--card",
                    TestEnvironment.tempDir("discover-gopro-card"),
                ])
            gopro.standardOutput = FileHandle.nullDevice
            gopro.standardError = FileHandle.nullDevice
            try gopro.run()
            goproMDNS = net.process(
                in: net.camera, PageTests.python,
                [
                    TestEnvironment.repoRoot + "/Tests/Support/mdns_service.py", "--type", "_gopro-web._tcp.local.",
                    "--name", Self.goproSerial,
                    "--address", net.cameraAddress, "--port", "8080",
                ])
            let announced = Pipe()
            goproMDNS.standardOutput = announced
            goproMDNS.standardError = FileHandle.nullDevice
            try goproMDNS.run()
            guard String(decoding: announced.fileHandleForReading.readData(ofLength: 5), as: UTF8.self) == "READY"
            else {
                throw FixtureError("mdns_service.py did not start (zeroconf missing? run scripts/install-deps.sh test)")
            }
            root = TestEnvironment.tempDir("discover")
            config = try writeConfig(
                root: root, plugins: TestEnvironment.buildDir, segmentSeconds: 2, httpBind: "127.0.0.1:\(port)")
            let admin = try LiveChangeTests.Served.nvr(
                ["user", "add", "boss", "--role", "admin", "--config", config], stdin: "correct horse\n")
            guard admin.status == 0 else { throw FixtureError("user add: \(admin.stderr)") }
        }

        deinit {
            if let s = serve, s.isRunning {
                s.terminate()
                s.waitUntilExit()
            }
            onvif.stop()
            rtsp.stop()
            for p in [tuya, gopro, goproMDNS] where p.isRunning {
                p.terminate()
                p.waitUntilExit()
            }
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
        let net = lab.net
        let onvif = lab.onvif
        let root = lab.root
        let config = lab.config
        let port = lab.port
        let nvr = TestEnvironment.nvrExecutable
        func discover(_ args: [String]) throws -> ProcessResult {
            try net.run(in: net.nvr, nvr, ["discover", "--seconds", "2", "--config", config] + args)
        }

        // What answered, as JSON (6 s: the Tuya device announces itself every 5 s).
        let found = try net.run(in: net.nvr, nvr, ["discover", "--seconds", "6", "--json", "--config", config])
        #expect(found.status == 0, "\(found.stderr)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(found.stdout.utf8)) as? [String: Any], "\(found.stdout)")
        let cameras = report["found"] as? [[String: Any]] ?? []
        let cam = try #require(cameras.first { $0["plugin"] as? String == "onvif" }, "\(found.stdout)")
        #expect(cam["address"] as? String == onvif.address)
        #expect(cam["name"] as? String == "SimCam-1" && cam["model"] as? String == "SIM-1")
        #expect((cam["id"] as? String)?.hasPrefix("urn:uuid:") == true)
        #expect(cam["addedAs"] == nil)
        #expect(report["plugins"] as? [String] == ["gopro", "insta360", "onvif", "tuya"])
        let device = try #require(cameras.first { $0["plugin"] as? String == "tuya" }, "\(found.stdout)")
        #expect(
            device["address"] as? String == net.cameraAddress && device["id"] as? String == "bf12ab34cd56ef78gh90ij")
        #expect(
            device["options"] as? [String: String] == [
                "device_id": "bf12ab34cd56ef78gh90ij", "lan_host": net.cameraAddress, "lan_version": "3.3",
            ])
        #expect((device["addCommand"] as? String)?.contains("--option local_key=LOCAL_KEY") == true, "\(device)")
        let gp = try #require(cameras.first { $0["plugin"] as? String == "gopro" }, "\(found.stdout)")
        #expect(
            gp["address"] as? String == net.cameraAddress && gp["id"] as? String == Lab.goproSerial
                && gp["name"] as? String == "GoPro 0789")
        #expect(gp["model"] as? String == "HERO12 Black (H23.01.02.32.00)")
        #expect(
            gp["addCommand"] as? String
                == "nvr camera add gopro-0789 --plugin gopro --option base_url=http://\(net.cameraAddress):8080")

        // For people: a table and the line to add it.
        let text = try discover([])
        #expect(text.status == 0 && text.stdout.contains("SimCam-1"), "\(text.stdout)\(text.stderr)")
        let line = try #require(
            text.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.first {
                $0.hasPrefix("nvr camera add simcam-1")
            },
            "\(text.stdout)")
        #expect(
            line
                == "nvr camera add simcam-1 --plugin onvif --option address=\(onvif.address) --option user=USER --option password=PASSWORD"
        )
        let args = line.replacingOccurrences(of: "USER", with: "admin").replacingOccurrences(
            of: "PASSWORD", with: "secret"
        )
        .split(separator: " ").dropFirst().map { String($0) }
        let added = try runProcess(nvr, args + ["--config", config])
        #expect(added.status == 0, "\(added.stdout)\(added.stderr)")
        // The GoPro's line needs nothing filled in.
        let goproLine = try #require(
            text.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                .first { $0.hasPrefix("nvr camera add gopro-0789") }, "\(text.stdout)")
        let addedGoPro = try runProcess(
            nvr, goproLine.split(separator: " ").dropFirst().map { String($0) } + ["--config", config])
        #expect(addedGoPro.status == 0, "\(addedGoPro.stdout)\(addedGoPro.stderr)")

        // Served on the NVR's side of the network, it records the camera it was given.
        let token = try runProcess(
            nvr, ["token", "add", "--user", "boss", "--name", "t", "--quiet", "--config", config]
        )
        .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try lab.startServing()
        let index = try IndexDatabase(path: root + "/Storage/index.sqlite")
        for name in ["simcam-1", "gopro-0789"] {
            let id = try #require(try index.camera(named: name)?.id, "\(name) was added")
            #expect(
                await TestEnvironment.eventually(timeout: 30) {
                    ((try? index.segments(state: .complete)) ?? []).contains { $0.cameraID == id && $0.frames > 0 }
                }, "\(name), found and added with the printed line, records:\n\(lab.logText)")
        }

        // The page's view of the same: the camera is now marked as added.
        let api = try net.run(
            in: net.nvr, "/usr/bin/curl",
            ["-s", "-H", "Authorization: Bearer \(token)", "http://127.0.0.1:\(port)/api/discover?seconds=2"])
        let answer = try JSONSerialization.jsonObject(with: Data(api.stdout.utf8)) as? [String: Any]
        let listed = (answer?["found"] as? [[String: Any]])?.first { $0["plugin"] as? String == "onvif" }
        #expect(listed?["addedAs"] as? String == "simcam-1", "\(api.stdout)")
        let viewer = try net.run(
            in: net.nvr, "/usr/bin/curl",
            ["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/api/discover"])
        #expect(viewer.stdout == "401")
        let bad = try net.run(
            in: net.nvr, "/usr/bin/curl",
            [
                "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer \(token)",
                "http://127.0.0.1:\(port)/api/discover?seconds=999",
            ])
        #expect(bad.stdout == "400")
    }

    /// The page: an admin finds the camera under "Add cameras", adds it with its password,
    /// and it streams in the grid (chromium runs on the NVR's side of the network too).
    @Test func thePageFindsAndAddsTheCamera() throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"),
            "chromium is missing: run scripts/install-deps.sh test")
        let lab = try Lab()
        try lab.startServing()
        let shots = TestEnvironment.repoRoot + "/.build/test-screenshots"
        try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)
        let r = try lab.net.run(
            in: lab.net.nvr, PageTests.python,
            [
                TestEnvironment.repoRoot + "/Tests/Browser/discover_test.py", "--base", "http://127.0.0.1:\(lab.port)",
                "--user", "boss",
                "--password", "correct horse", "--address", lab.onvif.address, "--camera-user", "admin",
                "--camera-password", "secret",
                "--shots", shots,
            ])
        print(r.stdout)
        #expect(
            r.status == 0,
            "the page failed in chromium:\n\(r.stdout)\n\(r.stderr.suffix(3000))\n\(lab.logText.suffix(2000))")
    }

    @Test func nothingToFindIsSaidPlainly() throws {
        let net = try TestNetwork()
        let root = TestEnvironment.tempDir("discover-none")
        defer { TestEnvironment.cleanup(root) }
        let config = try writeConfig(root: root, plugins: TestEnvironment.buildDir)
        let r = try net.run(
            in: net.nvr, TestEnvironment.nvrExecutable, ["discover", "--seconds", "1", "--config", config])
        #expect(
            r.status == 0 && r.stdout.hasPrefix("nothing answered in 1 s (looked with: gopro, insta360, onvif, tuya)"),
            "\(r.stdout)\(r.stderr)")
        let bad = try runProcess(TestEnvironment.nvrExecutable, ["discover", "--seconds", "0", "--config", config])
        #expect(bad.status != 0 && bad.stderr.contains("--seconds must be between 0.5 and 30"), "\(bad.stderr)")
    }

    /// A camera switched on while `nvr discover` looks says Hello and is listed; one switched
    /// off says Bye and is not, though it answered the Probe.
    @Test func camerasThatSayHelloOrByeWhileWeLookAreCountedInOrOut() throws {
        let net = try TestNetwork()
        let root = TestEnvironment.tempDir("discover-hello")
        defer { TestEnvironment.cleanup(root) }
        func camera(_ uuid: String) throws -> ONVIFCameraFixture {
            var o = ONVIFCameraFixture.Options(mainURI: "rtsp://\(net.cameraAddress):8554/main")
            o.namespace = net.camera
            o.address = net.cameraAddress
            o.discovery = true
            o.uuid = uuid
            return try ONVIFCameraFixture(o)
        }
        let leaving = try camera("11111111-0000-4000-8000-000000000001")
        let config = try writeConfig(root: root, plugins: TestEnvironment.buildDir)
        let discover = net.process(
            in: net.nvr, TestEnvironment.nvrExecutable, ["discover", "--json", "--seconds", "5", "--config", config])
        let out = Pipe()
        discover.standardOutput = out
        discover.standardError = FileHandle.nullDevice
        try discover.run()
        Thread.sleep(forTimeInterval: 2)
        let arriving = try camera("22222222-0000-4000-8000-000000000002")
        Thread.sleep(forTimeInterval: 0.5)
        leaving.stop()
        let text = out.fileHandleForReading.readDataToEndOfFile()
        discover.waitUntilExit()
        let report = try #require(
            try JSONSerialization.jsonObject(with: text) as? [String: Any], "\(String(decoding: text, as: UTF8.self))")
        let ids = (report["found"] as? [[String: Any]] ?? []).filter { $0["plugin"] as? String == "onvif" }.compactMap {
            $0["id"] as? String
        }
        #expect(ids == ["urn:uuid:22222222-0000-4000-8000-000000000002"], "\(String(decoding: text, as: UTF8.self))")
        arriving.stop()
    }

    /// Cameras on their own access points announce nothing: a GoPro answers at 10.5.5.9 and an
    /// Insta360 at 192.168.42.1 when this machine has an address on that network. Their lines
    /// use the plugins' default addresses.
    @Test func camerasOnTheirAccessPointsAreFound() throws {
        let net = try TestNetwork()
        for (ns, address, dev) in [
            (net.camera, "10.5.5.9/24", net.cameraLink), (net.nvr, "10.5.5.100/24", net.nvrLink),
            (net.camera, "192.168.42.1/24", net.cameraLink), (net.nvr, "192.168.42.10/24", net.nvrLink),
        ] {
            let r = try net.run(in: ns, "/usr/sbin/ip", ["addr", "add", address, "dev", dev])
            try #require(r.status == 0, "ip addr add \(address) dev \(dev): \(r.stderr)")
        }
        let card = TestEnvironment.tempDir("discover-ap-card")
        let card360 = TestEnvironment.tempDir("discover-ap-card360")
        let root = TestEnvironment.tempDir("discover-ap")
        defer { for d in [root, card, card360] { TestEnvironment.cleanup(d) } }
        let gopro = net.process(
            in: net.camera, TestEnvironment.buildDir + "/camsim",
            ["gopro", "--address", "10.5.5.9", "--port", "8080", "--no-record", "--card", card])
        let insta = net.process(
            in: net.camera, TestEnvironment.buildDir + "/camsim",
            ["insta360", "--address", "192.168.42.1", "--port", "80", "--card", card360])
        for p in [gopro, insta] {
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
        }
        defer {
            for p in [gopro, insta] {
                p.terminate()
                p.waitUntilExit()
            }
        }
        let config = try writeConfig(root: root, plugins: TestEnvironment.buildDir)
        var r = ProcessResult(status: -1, stdout: "", stderr: "")
        // The simulators may take a moment to listen.
        _ = TestEnvironment.wait(timeout: 15) {
            r =
                (try? net.run(
                    in: net.nvr, TestEnvironment.nvrExecutable, ["discover", "--seconds", "1", "--config", config]))
                ?? r
            return r.stdout.contains("10.5.5.9") && r.stdout.contains("192.168.42.1")
        }
        #expect(
            r.status == 0 && r.stdout.contains("GoPro 0789") && r.stdout.contains("Insta360 X3 (v1.0.04)"),
            "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("\n  nvr camera add gopro-0789 --plugin gopro\n"), "\(r.stdout)")
        #expect(
            r.stdout.contains("\n  nvr camera add insta360-x3 --plugin insta360 --option stream_key=STREAM_KEY\n"),
            "\(r.stdout)")
    }
}
