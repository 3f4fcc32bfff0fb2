import Foundation
import TestSupport
import Testing

/// MQTT as a smart home sees it: `nvr serve` with [mqtt] against Debian's mosquitto, checked by
/// an independent client (paho-mqtt). A GStreamer camera shows a scripted scene (a square
/// crossing it from 8 s to 14 s); the broker is killed in the middle of the event, at 12 s, and
/// comes back 20 s later.
@Suite(.serialized, .tags(.system)) struct MQTTTests {
    static func mqttConfig(port: Int, extra: String = "") -> String {
        """
        [mqtt]
        host = "127.0.0.1"
        port = \(port)
        client_id = "nvrtest"
        commands = true
        \(extra)
        """
    }

    @Test func eventsStatesDiscoveryOutageAndCommands() throws {
        let broker = try MosquittoFixture()
        let listener = try MQTTListener(port: broker.port, folder: broker.folder)
        let t0File = broker.folder + "/t0"
        var o = RTSPCameraFixture.Options()
        o.pattern = "scene"
        o.fps = 10
        o.gopSeconds = 1
        o.extraArguments = ["--motion", "8-14", "--t0-file", t0File]
        let cam = try RTSPCameraFixture(o)
        let s = try LiveChangeTests.Served(extraConfig: Self.mqttConfig(port: broker.port))
        let added = try s.api("POST", "/api/cameras", json: #"{"name":"yard","plugin":"rtsp","url":"\#(cam.url)"}"#)
        #expect(added.status == 201, "\(added.body)")
        let set = try s.api(
            "PUT", "/api/cameras/yard/recording-settings",
            json: #"{"mode":"continuous","motion":"on","motionFrames":"keyframes","motionQuietSeconds":2}"#)
        #expect(set.status == 200, "\(set.body)")
        #expect(TestEnvironment.wait(timeout: 20) { FileManager.default.fileExists(atPath: t0File) })
        let t0 = try #require(
            Double(try String(contentsOfFile: t0File, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))

        // Online, with Home Assistant's discovery: each config has the keys its schema requires.
        #expect(
            TestEnvironment.wait(timeout: 10) { listener.on("nvr/available").last?.text == "online" }, "\(s.logText)")
        let configs: [String: [String]] = [
            "homeassistant/binary_sensor/nvrtest/yard_motion/config": ["state_topic"],
            "homeassistant/camera/nvrtest/yard_camera/config": ["topic"],
            "homeassistant/sensor/nvrtest/yard_state/config": ["state_topic"],
            "homeassistant/switch/nvrtest/yard_recording/config": ["command_topic", "state_topic"],
            "homeassistant/switch/nvrtest/yard_motion_detection/config": ["command_topic", "state_topic"],
            "homeassistant/binary_sensor/nvrtest/status/config": ["state_topic"],
        ]
        #expect(TestEnvironment.wait(timeout: 10) { configs.keys.allSatisfy { !listener.on($0).isEmpty } })
        for (topic, required) in configs {
            let c = try #require(listener.on(topic).last?.json, "no config on \(topic)")
            for key in required + ["unique_id", "device", "name"] {
                #expect(c[key] != nil, "\(topic) has no \(key): \(c)")
            }
            let device = c["device"] as? [String: Any]
            #expect((device?["identifiers"] as? [String])?.isEmpty == false, "\(topic): \(c)")
            if topic.contains("yard") { #expect(device?["via_device"] as? String == "nvrtest", "\(topic): \(c)") }
        }
        #expect(
            TestEnvironment.wait(timeout: 10) {
                listener.on("nvr/yard/state").last?.json?["state"] as? String == "streaming"
            })
        #expect(listener.on("nvr/yard/recording/state").last?.text == "ON")
        let stats = try #require(listener.on("nvr/stats").last?.json, "no stats")
        // The first stats come at connection, before the camera was added; the next in 60 s.
        #expect(
            stats["cameras"] is [String: Any] && (stats["service"] as? [String: Any])?["version"] is String, "\(stats)")

        // The event starts (motion ON, events "new") with the broker up...
        #expect(
            TestEnvironment.wait(timeout: t0 + 12 - Date().timeIntervalSince1970) {
                listener.on("nvr/yard/motion").last?.text == "ON"
            })
        let new = try #require(listener.on("nvr/events").first?.json, "no event message")
        #expect(new["type"] as? String == "new")
        let after = try #require(new["after"] as? [String: Any])
        #expect(after["label"] as? String == "motion" && after["camera"] as? String == "yard", "\(after)")
        let id = try #require(after["id"] as? String)
        // ...and ends while the broker is away (killed at 12 s, back 20 s later): no recording
        // hole, and the queued "end" arrives once it is back.
        #expect(
            TestEnvironment.wait(timeout: max(0, t0 + 12 - Date().timeIntervalSince1970) + 1) {
                Date().timeIntervalSince1970 >= t0 + 12
            })
        let outage = Date().timeIntervalSince1970
        broker.stop()
        #expect(TestEnvironment.wait(timeout: 25) { Date().timeIntervalSince1970 >= outage + 20 })
        #expect((try? s.api("GET", "/api/health"))?.body.contains("\"mqtt\"") == true)
        try broker.start()
        let back = Date().timeIntervalSince1970
        #expect(
            TestEnvironment.wait(timeout: 40) {
                listener.on("nvr/available").contains { $0.time >= back && $0.text == "online" }
            }, "\(s.logText)")
        #expect(
            TestEnvironment.wait(timeout: 10) {
                listener.on("homeassistant/binary_sensor/nvrtest/yard_motion/config").contains { $0.time >= back }
            })
        #expect(
            TestEnvironment.wait(timeout: 10) {
                listener.on("nvr/events").contains { $0.json?["type"] as? String == "end" }
            })
        let endMessage = try #require(listener.on("nvr/events").first { $0.json?["type"] as? String == "end" })
        let end = try #require(endMessage.json?["after"] as? [String: Any])
        #expect(end["id"] as? String == id)
        // It ended while the broker was away, and waited in the NVR's queue.
        let ended = Double((end["end90k"] as? NSNumber)?.int64Value ?? 0) / 90_000
        #expect(
            ended > outage && ended < back,
            "ended at \(ended - t0) s; broker away from \(outage - t0) s to \(back - t0) s")
        #expect(endMessage.time >= back)
        #expect(TestEnvironment.wait(timeout: 3) { listener.on("nvr/yard/motion").last?.text == "OFF" })
        // The event's best frame, for Home Assistant's camera entity.
        #expect(listener.on("nvr/yard/snapshot").last.map { $0.bytes > 1000 } == true)
        #expect(end["end_time"] is Double && new["after"].map { ($0 as? [String: Any])?["end_time"] is NSNull } == true)
        // The times match the API's.
        let api = try s.api("GET", "/api/events/\(id)")
        let e = try #require(
            (try? JSONSerialization.jsonObject(with: Data(api.body.utf8))) as? [String: Any], "\(api.body)")
        #expect(
            (e["start90k"] as? NSNumber)?.int64Value == (end["start90k"] as? NSNumber)?.int64Value, "\(e) vs \(end)")
        #expect((e["end90k"] as? NSNumber)?.int64Value == (end["end90k"] as? NSNumber)?.int64Value, "\(e) vs \(end)")
        #expect(
            abs((end["start_time"] as? Double ?? 0) - Double((e["start90k"] as? NSNumber)?.int64Value ?? 0) / 90_000)
                < 0.001)
        #expect(abs(Double((e["start90k"] as? NSNumber)?.int64Value ?? 0) / 90_000 - (t0 + 8)) < 1.5, "\(e)")
        // No hole in the recording across the outage.
        let from = Int64((outage - 5) * 90_000)
        let to = Int64((back + 2) * 90_000)
        let recs = try s.api("GET", "/api/cameras/yard/recordings?start=\(from)&end=\(to)")
        let list =
            ((try? JSONSerialization.jsonObject(with: Data(recs.body.utf8))) as? [String: Any])?["recordings"]
            as? [[String: Any]] ?? []
        let spans = list.compactMap { r -> (Int64, Int64)? in
            guard let a = (r["start90k"] as? NSNumber)?.int64Value, let b = (r["end90k"] as? NSNumber)?.int64Value
            else { return nil }
            return (a, b)
        }.sorted { $0.0 < $1.0 }
        #expect(
            spans.first.map { $0.0 <= from } == true && spans.last.map { $0.1 >= to - 4 * 90_000 } == true, "\(spans)")
        for (a, b) in zip(spans, spans.dropFirst()) { #expect(b.0 - a.1 < 90_000 / 2, "a hole from \(a.1) to \(b.0)") }

        // A command: recording OFF stops recording within 2 s, and is acknowledged.
        let pub = try runProcess(
            "/usr/bin/mosquitto_pub",
            ["-h", "127.0.0.1", "-p", String(broker.port), "-t", "nvr/yard/recording/set", "-m", "OFF"])
        #expect(pub.status == 0, "\(pub.stderr)")
        let sent = Date()
        #expect(TestEnvironment.wait(timeout: 2.5) { s.modeOf("yard") == "off" }, "mode \(s.modeOf("yard"))")
        #expect(Date().timeIntervalSince(sent) < 2.5)
        #expect(TestEnvironment.wait(timeout: 3) { listener.on("nvr/yard/recording/state").last?.text == "OFF" })
        let audit = try s.api("GET", "/api/audit?limit=5")
        #expect(audit.body.contains("\"user\":\"mqtt\""), "\(audit.body)")
        // A bad payload is ignored (and logged once).
        _ = try runProcess(
            "/usr/bin/mosquitto_pub",
            ["-h", "127.0.0.1", "-p", String(broker.port), "-t", "nvr/yard/recording/set", "-m", "maybe"])
        #expect(
            TestEnvironment.wait(timeout: 3) { s.logText.contains("ignored nvr/yard/recording/set") }, "\(s.logText)")
        #expect(s.modeOf("yard") == "off")

        // Motion detection OFF and ON again: the settings stay valid (the API still reads them).
        for (value, enabled) in [("OFF", false), ("ON", true)] {
            _ = try runProcess(
                "/usr/bin/mosquitto_pub",
                ["-h", "127.0.0.1", "-p", String(broker.port), "-t", "nvr/yard/motion/set", "-m", value])
            #expect(TestEnvironment.wait(timeout: 3) { listener.on("nvr/yard/motion/state").last?.text == value })
            let settings = try s.api("GET", "/api/cameras/yard/recording-settings")
            #expect(settings.status == 200 && settings.body.contains("\"motionActive\":\(enabled)"), "\(settings.body)")
        }

        // Renamed: the old name's entities are removed (an empty retained config), the new one's appear.
        let renamed = try s.api("PATCH", "/api/cameras/yard", json: #"{"name":"garden"}"#)
        #expect(renamed.status == 200, "\(renamed.body)")
        #expect(
            TestEnvironment.wait(timeout: 10) {
                listener.on("homeassistant/binary_sensor/nvrtest/yard_motion/config").last?.bytes == 0
                    && listener.on("homeassistant/binary_sensor/nvrtest/garden_motion/config").last.map { $0.bytes > 0 }
                        == true
            })

        // Stopped: offline, said by the NVR (not the broker's will).
        s.stop()
        #expect(TestEnvironment.wait(timeout: 5) { listener.on("nvr/available").last?.text == "offline" })
        // The broker logs the goodbye when it has read it, a moment after the NVR has gone (CI
        // once looked before it had).
        #expect(
            TestEnvironment.wait(timeout: 5) { broker.log.contains("Client nvrtest disconnected.") },
            "a clean goodbye, not a dropped connection: \(broker.log.suffix(600)) nvr: \(s.logText.suffix(600))")
    }

    @Test func aWrongPasswordIsNamedAsSuchAndRecordingGoesOn() throws {
        let broker = try MosquittoFixture(users: ["nvr": "right horse"])
        let cam = try RTSPCameraFixture(RTSPCameraFixture.Options())
        let s = try LiveChangeTests.Served(
            extraConfig: Self.mqttConfig(port: broker.port, extra: "user = \"nvr\"\npassword = \"wrong battery\""))
        _ = try s.api("POST", "/api/cameras", json: #"{"name":"door","plugin":"rtsp","url":"\#(cam.url)"}"#)
        #expect(TestEnvironment.wait(timeout: 20) { s.state("door").hasPrefix("streaming") }, "\(s.state("door"))")
        var health = ""
        #expect(
            TestEnvironment.wait(timeout: 15) {
                health = (try? s.api("GET", "/api/health").body) ?? ""
                return health.contains("refused")
            }, "\(health)")
        #expect(health.contains("check mqtt.user and mqtt.password"), "\(health)")
        let list = try s.cli(["camera", "list"])
        #expect(list.stdout.contains("mqtt: refused") && list.stdout.contains("mqtt.password"), "\(list.stdout)")
        #expect(
            !list.stdout.contains("wrong battery") && !health.contains("wrong battery")
                && !s.logText.contains("wrong battery"))
        // The page's top bar says it too.
        let shots = TestEnvironment.repoRoot + "/.build/test-screenshots"
        try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)
        let page = try runProcess(
            TestEnvironment.repoRoot + "/.build/test-venv/bin/python",
            [
                TestEnvironment.repoRoot + "/Tests/Browser/server_status_test.py", "--base",
                "http://127.0.0.1:\(s.port)",
                "--user", "boss", "--password", "correct horse", "--expect", "MQTT refused", "--expect-title",
                "mqtt.password", "--shots", shots,
            ])
        #expect(page.status == 0, "the page in chromium: \(page.stdout) \(page.stderr.suffix(2000))")
    }
}

extension MQTTTests {
    /// No broker when the NVR starts: it records, says the broker is unreachable, and connects
    /// once one listens.
    @Test func aBrokerThatIsDownAtStartIsWaitedFor() throws {
        let broker = try MosquittoFixture()
        broker.stop()
        let s = try LiveChangeTests.Served(extraConfig: Self.mqttConfig(port: broker.port))
        var health = ""
        #expect(
            TestEnvironment.wait(timeout: 10) {
                health = (try? s.api("GET", "/api/health").body) ?? ""
                return health.contains("\"state\":\"unreachable\"") && health.contains("Connection refused")
            }, "\(health)")
        try broker.start()
        // Retries 1 s doubling: within 16 s of the first try it has tried again.
        #expect(
            TestEnvironment.wait(timeout: 20) {
                health = (try? s.api("GET", "/api/health").body) ?? ""
                return health.contains("\"state\":\"connected\"")
            }, "\(health)")
    }

    /// MQTT 5 over TLS to the broker, verified against the CA nvr.toml names, with a password file.
    @Test func mqtt5OverTLSWithAPasswordConnects() throws {
        let broker = try MosquittoFixture(users: ["nvr": "right horse"], tls: true)
        let s = try LiveChangeTests.Served(
            extraConfig: Self.mqttConfig(
                port: broker.port,
                extra:
                    "user = \"nvr\"\npassword = \"right horse\"\ntls = true\ntls_ca = \"\(broker.caFile)\"\nprotocol = \"5\""
            ).replacingOccurrences(of: "host = \"127.0.0.1\"", with: "host = \"localhost\""))
        var health = ""
        #expect(
            TestEnvironment.wait(timeout: 15) {
                health = (try? s.api("GET", "/api/health").body) ?? ""
                return health.contains("\"state\":\"connected\"")
            }, "\(health)\n\(s.logText)\n\(broker.log.suffix(2000))")
        // An independent client over the same TLS sees the NVR online.
        let sub = try runProcess(
            "/usr/bin/mosquitto_sub",
            [
                "-h", "localhost", "-p", String(broker.port), "--cafile", broker.caFile, "-u", "nvr", "-P",
                "right horse",
                "-t", "nvr/available", "-C", "1", "-W", "10",
            ])
        #expect(sub.status == 0 && sub.stdout.contains("online"), "\(sub.stdout) \(sub.stderr)")
    }
}

extension LiveChangeTests.Served {
    /// The recording mode the camera's session says it is in.
    func modeOf(_ camera: String) -> String {
        let body = (try? api("GET", "/api/cameras/\(camera)").body) ?? ""
        return ((try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any])?["mode"] as? String ?? "?"
    }
}
