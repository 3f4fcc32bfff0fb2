import Foundation
import TestSupport
import Testing

/// Pan, tilt and zoom end to end: `nvr serve` with the ONVIF simulator's PTZ service (checked
/// by onvif-zeep in ONVIFTests), driven through the API, MQTT (Debian's mosquitto) and the
/// page in Chromium (Tests/Browser/ptz_test.py). Where the camera points is read from the
/// simulator, not from the NVR.
@Suite(.serialized, .tags(.system)) struct PTZTests {
    static func json(_ body: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
    }

    @Test func theAPIAndMQTTTurnAnONVIFCameraAndEveryMoveEndsByItself() throws {
        let rtsp = try RTSPCameraFixture(.small())
        var o = ONVIFCameraFixture.Options(mainURI: rtsp.url)
        o.ptz = .timeout
        let porch = try ONVIFCameraFixture(o)
        o.ptz = .ignoresTimeout
        let stubborn = try ONVIFCameraFixture(o)
        let broker = try MosquittoFixture()
        let s = try LiveChangeTests.Served(extraConfig: MQTTTests.mqttConfig(port: broker.port))
        for (name, cam) in [("porch", porch), ("stubborn", stubborn)] {
            let a = try s.api(
                "POST", "/api/cameras",
                json:
                    #"{"name":"\#(name)","plugin":"onvif","options":{"address":"\#(cam.address)","user":"admin","password":"secret"}}"#
            )
            #expect(a.status == 201, "\(a.body)")
        }
        _ = try s.api("POST", "/api/cameras", json: #"{"name":"plain","plugin":"rtsp","url":"\#(rtsp.url)"}"#)

        // What it offers: the camera's one preset, pan, tilt and zoom, where it points.
        let d = try s.api("GET", "/api/cameras/porch/ptz")
        let described = Self.json(d.body)
        #expect(d.status == 200, "\(d.body)")
        #expect(
            described["steer"] as? Bool == true && described["panTilt"] as? Bool == true
                && described["absoluteZoom"] as? Bool == true,
            "\(d.body)")
        #expect(d.body.contains(#""name":"Home""#) && d.body.contains(#""position":{"#), "\(d.body)")

        // A move of 0.6 s at full speed (0.5 units a second): the camera is told its length
        // (ONVIF's Timeout) and stops by it, at exactly 0.3 (the NVR's own stop comes later).
        var m = try s.api("POST", "/api/cameras/porch/ptz", json: #"{"action":"move","pan":1,"seconds":0.6}"#)
        #expect(m.status == 200, "\(m.body)")
        #expect(try porch.ptzState().lastTimeout == 0.6)
        #expect(TestEnvironment.wait(timeout: 3) { (try? porch.ptzState())?.moving == false }, "kept turning")
        let turned = try porch.ptzState()
        #expect(abs(turned.pan - 0.3) < 0.01, "\(turned)")

        // Presets: saved, moved away (absolute zoom), gone back to.
        let saved = try s.api("POST", "/api/cameras/porch/ptz", json: #"{"action":"savePreset","name":"Gate"}"#)
        let token = Self.json(saved.body)["preset"] as? String
        #expect(saved.status == 200 && token != nil, "\(saved.body)")
        m = try s.api("POST", "/api/cameras/porch/ptz", json: #"{"action":"zoom","zoom":0.8}"#)
        let zoomed = try porch.ptzState().zoom
        #expect(m.status == 200 && abs(zoomed - 0.8) < 0.01, "\(m.body) \(zoomed)")
        m = try s.api("POST", "/api/cameras/porch/ptz", json: #"{"action":"preset","preset":"\#(token ?? "")"}"#)
        let back = try porch.ptzState()
        #expect(m.status == 200 && abs(back.pan - turned.pan) < 0.01 && back.zoom == 0, "\(m.body) \(back)")
        #expect(try s.api("GET", "/api/cameras/porch/ptz").body.contains(#""name":"Gate""#))
        #expect(try s.api("GET", "/api/audit?limit=20").body.contains(#""action":"ptz.preset""#))

        // Refused: out of range, no speed, too long, an unknown action; a camera without PTZ.
        for bad in [
            #"{"action":"move","pan":1.5}"#, #"{"action":"move"}"#, #"{"action":"move","tilt":1,"seconds":60}"#,
            #"{"action":"spin"}"#, #"{"action":"zoom","zoom":2}"#, #"{"action":"preset"}"#,
        ] {
            let r = try s.api("POST", "/api/cameras/porch/ptz", json: bad)
            #expect(r.status == 400 && r.body.contains("bad_request"), "\(bad): \(r.status) \(r.body)")
        }
        let none = try s.api("POST", "/api/cameras/plain/ptz", json: #"{"action":"stop"}"#)
        #expect(none.status == 409 && none.body.contains("no_ptz"), "\(none.body)")
        #expect(try s.api("GET", "/api/cameras/plain/ptz").status == 409)
        #expect(try porch.ptzState().moves == 1, "a refused request reached the camera")

        // A camera that ignores the move's timeout is stopped by the NVR when the move is up.
        let before = try stubborn.ptzState().stops
        m = try s.api("POST", "/api/cameras/stubborn/ptz", json: #"{"action":"move","tilt":1,"seconds":0.5}"#)
        #expect(m.status == 200, "\(m.body)")
        #expect(try stubborn.ptzState().moves == 1)
        #expect(
            TestEnvironment.wait(timeout: 3) {
                guard let st = try? stubborn.ptzState() else { return false }
                return !st.moving && st.stops == before + 1
            }, "\(String(describing: try? stubborn.ptzState()))")
        // At least the move's 0.5 s at 0.5 units a second (how much longer is the server's delay).
        let tilted = try stubborn.ptzState().tilt
        #expect(tilted > 0.24, "tilted \(tilted) in a 0.5 s move")

        // MQTT: a word moves the camera for a second; a bad payload is logged and ignored.
        let start = try porch.ptzState().pan
        let pub = try runProcess(
            "/usr/bin/mosquitto_pub",
            ["-h", "127.0.0.1", "-p", String(broker.port), "-t", "nvr/porch/ptz", "-m", "left"])
        #expect(pub.status == 0, "\(pub.stderr)")
        #expect(TestEnvironment.wait(timeout: 5) { ((try? porch.ptzState())?.pan ?? start) < start - 0.05 })
        #expect(TestEnvironment.wait(timeout: 3) { (try? porch.ptzState())?.moving == false })
        _ = try runProcess(
            "/usr/bin/mosquitto_pub",
            ["-h", "127.0.0.1", "-p", String(broker.port), "-t", "nvr/porch/ptz", "-m", "sideways"])
        #expect(
            TestEnvironment.wait(timeout: 3) { s.logText.contains("ignored nvr/porch/ptz") },
            "\(s.logText.suffix(2000))")
    }

    /// The page: the pad over live video held and let go, the arrow keys, a preset saved and gone
    /// back to, and a page closed in the middle of a move (the camera stops by itself).
    @Test func thePadKeysAndPresetsFromThePage() throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: PageTests.python),
            "playwright is missing: run scripts/install-deps.sh test")
        let rtsp = try RTSPCameraFixture(.small())
        var o = ONVIFCameraFixture.Options(mainURI: rtsp.url)
        o.ptz = .ignoresTimeout  // so only the NVR's own stops end moves
        let porch = try ONVIFCameraFixture(o)
        let s = try LiveChangeTests.Served()
        let a = try s.api(
            "POST", "/api/cameras",
            json:
                #"{"name":"porch","plugin":"onvif","options":{"address":"\#(porch.address)","user":"admin","password":"secret"}}"#
        )
        #expect(a.status == 201, "\(a.body)")
        let shots = TestEnvironment.repoRoot + "/.build/test-screenshots"
        try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)
        let r = try runProcess(
            PageTests.python,
            [
                TestEnvironment.repoRoot + "/Tests/Browser/ptz_test.py", "--base", "http://127.0.0.1:\(s.port)",
                "--user", "boss", "--password", "correct horse", "--shots", shots, "--token", s.token, "--camera",
                "porch", "--sim", "http://\(porch.address)",
            ])
        print(r.stdout)
        #expect(r.status == 0, "PTZ from the page failed in chromium:\n\(r.stdout)\n\(r.stderr.suffix(3000))")
    }
}
