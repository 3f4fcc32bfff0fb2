import Foundation
import NVRIndex
import NVRRecorder
import NVRTime
import TestSupport
import Testing

/// An ONVIF camera end to end: two GStreamer RTSP streams behind the ONVIF simulator (whose
/// clock is an hour ahead), added with nothing but its address, user and password.
@Suite(.serialized, .tags(.system)) struct ONVIFRecordingTests {
    /// The plugin's status JSON as an object.
    static func status(_ session: CameraSession) -> [String: Any] {
        guard let s = session.pluginInstance?.status(),
            let o = try? JSONSerialization.jsonObject(with: Data(s.utf8)) as? [String: Any]
        else { return [:] }
        return o
    }

    static func subscriptions(_ session: CameraSession) -> Int {
        ((status(session)["events"] as? [String: Any])?["subscriptions"] as? NSNumber)?.intValue ?? 0
    }

    @Test func addedWithAddressUserAndPasswordItRecordsWatchesTheSubStreamAndRecordsOnItsMotion() async throws {
        let main = try RTSPCameraFixture()
        var small = RTSPCameraFixture.Options()
        small.width = 320
        small.height = 180
        let sub = try RTSPCameraFixture(small)
        var o = ONVIFCameraFixture.Options(mainURI: main.url)
        o.subURI = sub.url
        o.clockOffset = 3600
        let onvif = try ONVIFCameraFixture(o)

        let h = try RecorderHarness(segmentSeconds: 2)
        try h.add(
            "door", plugin: "onvif",
            ["address": onvif.address, "user": "admin", "password": "secret", "subscription_seconds": "10"])
        // The NVR's own detector looks at the sub-stream (the ONVIF profile with the smaller picture).
        var motion = MotionSettings()
        motion.enabled = .on
        let door = try h.camera("door")
        try h.index.setRecordingSettings(
            CameraRecordingRecord(
                cameraID: door.id!, mode: "continuous", preRoll90k: 0, postRoll90k: 90_000,
                motion: String(decoding: try JSONEncoder().encode(motion), as: UTF8.self)))
        try h.recorder.start(addDemoIfEmpty: false)
        defer { h.recorder.stop() }
        let session = try #require(h.recorder.session(named: "door"))
        #expect(
            await TestEnvironment.eventually(timeout: 20) { session.status.state == .streaming }, "\(session.status)")
        #expect(
            await TestEnvironment.eventually(timeout: 20) { session.status.motion == "sub-stream" }, "\(session.status)"
        )
        // The main stream (the larger profile) is what is recorded.
        #expect(
            try await TestEnvironment.eventually(timeout: 20) {
                try h.completeSegments("door").contains { $0.frames > 0 }
            })
        let seg = try #require(try h.completeSegments("door").first)
        let probe = try runProcess(
            "/usr/bin/ffprobe",
            [
                "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                "-of", "csv=p=0", h.recorder.storage.absolute(seg.path),
            ])
        #expect(
            probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "640,360", "\(probe.stdout) \(probe.stderr)"
        )
        let status = Self.status(session)
        #expect(
            status["model"] as? String == "SimCam-1" && status["main_profile"] as? String == "main"
                && status["sub_profile"] as? String == "sub",
            "\(status)")
        let offset = (status["clock_offset_seconds"] as? NSNumber)?.doubleValue ?? 0
        #expect(abs(offset - 3600) < 2, "\(status)")

        // The camera's motion report becomes an NVR event within a second.
        #expect(
            await TestEnvironment.eventually(timeout: 10) { Self.subscriptions(session) >= 1 },
            "\(Self.status(session))")
        func pluginEvents() throws -> [EventRecord] {
            try h.index.events(
                cameraID: door.id!, start90k: Time90k.now() - 600 * 90_000, end90k: Time90k.now() + 90_000
            )
            .filter { $0.source == .plugin && $0.type == "motion" }
        }
        let reported = Time90k.now()
        try onvif.motion(true)
        #expect(try await TestEnvironment.eventually(timeout: 5) { try pluginEvents().count == 1 })
        let event = try #require(try pluginEvents().first)
        #expect(
            event.start90k - reported < 90_000 && event.start90k - reported > -9_000,
            "the event starts \(Double(event.start90k - reported) / 90_000) s after the camera's report")

        // The camera drops the subscription, and says so as many cameras do (a WS-BaseFaults
        // ResourceUnknownFault in the fault's Detail): a new one comes at once, and the end of
        // the motion (reported after it) still ends the event.
        let dropped = Date()
        try onvif.dropSubscriptions(fault: .detail)
        // Watched closely: "at once" is the pending pull answered with the fault, then the
        // clock, the services and a new subscription (the old code waited its 1-s backoff first).
        while Self.subscriptions(session) < 2 && Date().timeIntervalSince(dropped) < 5 {
            try await Task.sleep(for: .milliseconds(5))
        }
        let resubscribed = Date().timeIntervalSince(dropped)
        print("onvif: subscription made again \(Int(resubscribed * 1000)) ms after the camera dropped it")
        #expect(Self.subscriptions(session) >= 2, "\(Self.status(session))")
        #expect(resubscribed < 1, "made again \(resubscribed) s after the drop: not at once")
        let ended = Time90k.now()
        try onvif.motion(false)
        #expect(try await TestEnvironment.eventually(timeout: 5) { try pluginEvents().first?.end90k != nil })
        let end = try #require(try pluginEvents().first?.end90k)
        #expect(end - ended < 90_000, "the event ends \(Double(end - ended) / 90_000) s after the camera's report")
        // Renewed (every 5 s here) while it runs: still the second subscription after 12 s.
        try await Task.sleep(for: .seconds(12))
        #expect(Self.subscriptions(session) == 2, "\(Self.status(session))")
        #expect(session.status.state == .streaming)
    }

    @Test func aWrongPasswordIsSaidAsSuch() async throws {
        let main = try RTSPCameraFixture()
        let onvif = try ONVIFCameraFixture(ONVIFCameraFixture.Options(mainURI: main.url))
        let h = try RecorderHarness(segmentSeconds: 2)
        try h.add(
            "gate", plugin: "onvif",
            ["address": onvif.address, "user": "admin", "password": "wrong", "events": "false"])
        try h.recorder.start(addDemoIfEmpty: false)
        defer { h.recorder.stop() }
        let session = try #require(h.recorder.session(named: "gate"))
        #expect(
            await TestEnvironment.eventually(timeout: 10) {
                session.status.reason?.contains("refused the user name or password") == true
            },
            "\(session.status)")
        #expect(session.status.state != .streaming)
    }

    /// `camera add` checks the options with an instance it destroys at once: that must not
    /// take one of the camera's few subscriptions. A password inside the address is refused
    /// (it would show in status and logs).
    @Test func addingChecksWithoutSubscribingAndKeepsPasswordsOutOfTheAddress() throws {
        let main = try RTSPCameraFixture()
        let onvif = try ONVIFCameraFixture(ONVIFCameraFixture.Options(mainURI: main.url))
        let root = TestEnvironment.tempDir("onvif-add")
        defer { TestEnvironment.cleanup(root) }
        let config = try writeConfig(root: root, plugins: TestEnvironment.buildDir)
        let nvr = TestEnvironment.nvrExecutable
        let added = try runProcess(
            nvr,
            [
                "camera", "add", "gate", "--plugin", "onvif", "--option", "address=\(onvif.address)",
                "--option", "user=admin", "--option", "password=secret", "--config", config,
            ])
        #expect(added.status == 0, "\(added.stdout)\(added.stderr)")
        Thread.sleep(forTimeInterval: 1)
        #expect(try onvif.subscriptionCounts().created == 0)
        let inURL = try runProcess(
            nvr,
            [
                "camera", "add", "door", "--plugin", "onvif", "--option",
                "address=http://admin:secret@\(onvif.address)",
                "--config", config,
            ])
        #expect(inURL.status != 0 && inURL.stderr.contains("must not carry a user or password"), "\(inURL.stderr)")
    }
}
