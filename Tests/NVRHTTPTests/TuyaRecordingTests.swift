import CamSim
import Foundation
import NVRIndex
import NVRRecorder
import NVRTime
import Synchronization
import TestSupport
import Testing
import TuyaAPI

/// A Tuya camera end to end: the cloud simulator allocates a fresh URL to a real GStreamer RTSP
/// camera for every connection, a simulated device pushes motion over the LAN protocol (3.3
/// and 3.4), and the NVR records in events mode: motion events from the LAN, event
/// recordings, a token that expires mid-run renewed without touching the recording, and a
/// re-allocation after the camera drops.
@Suite(.serialized, .tags(.system)) struct TuyaRecordingTests {
    @Test(arguments: [TuyaLAN.Version.v33, .v34])
    func recordsViaAllocationWithLANMotionEvents(version: TuyaLAN.Version) async throws {
        let camera = try RTSPCameraFixture()
        var o = TuyaCloudSimulator.Options()
        o.logger.logLevel = .warning
        let cloud = TuyaCloudSimulator(o)
        let cloudPort = try await TestEnvironment.startServer("Tuya cloud simulator") { onBound in
            try await cloud.run(onBound: onBound)
        }
        defer { Task { await cloud.shutdown() } }
        // Allocated URLs are single use, as Tuya's are: a gate in front of the RTSP camera admits
        // each token once.
        let gate = try SingleUseRTSPGate(upstream: camera.url)
        defer { gate.stop() }
        let issued = Mutex<[String]>([])
        cloud.setAllocator { _ in
            let u = gate.issue()
            issued.withLock { $0.append(u) }
            return u
        }
        // Recordings in the camera's cloud storage: one an hour ago, one three days ago.
        let now = Int64(Date().timeIntervalSince1970)
        cloud.addCloudRecording(deviceID: o.devices.first!, start: now - 3600, stop: now - 3000)
        cloud.addCloudRecording(deviceID: o.devices.first!, start: now - 3 * 86_400, stop: now - 3 * 86_400 + 600)
        let device = try TuyaDeviceSimulator(
            deviceID: o.devices.first!, localKey: "a1b2c3d4e5f6g7h8", version: version, motionSeconds: 2)
        defer { device.stop() }

        let h = try RecorderHarness(segmentSeconds: 3)
        try h.add(
            "tu", plugin: "tuya",
            [
                "device_id": device.deviceID, "cloud_host": "http://127.0.0.1:\(cloudPort)", "client_id": o.clientID,
                "secret": o.secret, "lan_host": "127.0.0.1", "lan_port": String(device.port),
                "lan_version": version.rawValue, "local_key": device.localKey, "quiet_seconds": "3",
                "heartbeat_seconds": "2", "status_seconds": "1",
            ])
        // A camera that exposes RTSP on the LAN is recorded from there, with no allocation.
        if version == .v33 {
            try h.add("lo", plugin: "tuya", ["device_id": device.deviceID, "local_rtsp_url": camera.url])
        }
        var motion = MotionSettings()
        motion.enabled = .off  // events come from the camera, over the LAN
        let cam = try h.camera("tu")
        try h.index.setRecordingSettings(
            CameraRecordingRecord(
                cameraID: cam.id!, mode: "events", preRoll90k: 2 * 90_000, postRoll90k: 2 * 90_000,
                motion: String(decoding: try JSONEncoder().encode(motion), as: UTF8.self)))
        try h.recorder.start(addDemoIfEmpty: false)
        defer { h.recorder.stop() }
        let server = try await TestServer(index: h.index, storage: h.recorder.storage, recorder: h.recorder)
        let session = try #require(h.recorder.session(named: "tu"))

        // Live through an allocated URL; motion over the LAN opens an event; events mode records it.
        #expect(
            await TestEnvironment.eventually(timeout: 20) { session.status.state == .streaming }, "\(session.status)")
        #expect(cloud.stats.allocations == 1 && cloud.stats.badSigns == 0)
        if version == .v33 {
            #expect(
                await TestEnvironment.eventually(timeout: 20) {
                    h.recorder.session(named: "lo")?.status.state == .streaming
                })
            #expect(cloud.stats.allocations == 1 && gate.stats.admitted == 1, "the local camera allocated nothing")
        }
        let start = Time90k.now() - 60 * 90_000
        #expect(
            try await TestEnvironment.eventually(timeout: 20) {
                try h.index.events(cameraID: cam.id!, start90k: start, end90k: Time90k.now() + 90_000).contains {
                    $0.type == "motion" && $0.source == .plugin
                }
            }, "a motion event from the LAN")
        #expect(
            try await TestEnvironment.eventually(timeout: 20) {
                try h.completeSegments("tu").contains { $0.hasEvent && $0.frames > 0 }
            },
            "event footage recorded")
        let status = try #require(session.pluginInstance?.status())
        #expect(status.contains("SD ok"), "\(status)")
        #expect(status.contains("LAN \(version.rawValue) connected"), "\(status)")

        // The cloud's recordings of the last 24 h are on the timeline as source cloud, location cloud.
        #expect(
            try await TestEnvironment.eventually(timeout: 10) {
                !(try h.index.cardSlices(cameraID: cam.id!, start90k: (now - 7200) * 90_000, end90k: now * 90_000))
                    .isEmpty
            })
        let timeline = try await server.get(
            "/api/cameras/tu/timeline?start=\((now - 7200) * 90_000)&end=\((now - 60) * 90_000)")
        let slices = timeline.json["slices"] as? [[String: Any]] ?? []
        #expect(
            slices.count == 1 && slices.first?["source"] as? String == "cloud"
                && slices.first?["location"] as? String == "cloud"
                && slices.first?["start90k"] as? Int64 == (now - 3600) * 90_000
                && slices.first?["end90k"] as? Int64 == (now - 3000) * 90_000,
            "\(timeline.json)")

        // The token expires: the next cloud call renews it; the recording carries on in one run.
        let runs = Set(try h.segments("tu").map(\.runID))
        cloud.expireTokens()
        #expect(await TestEnvironment.eventually(timeout: 10) { cloud.stats.refreshes >= 1 }, "\(cloud.stats)")
        try await Task.sleep(nanoseconds: 2_000_000_000)
        #expect(Set(try h.segments("tu").map(\.runID)) == runs, "no new run for a token renewal")
        #expect(session.status.state == .streaming)

        // The camera drops: the reconnect allocates a fresh URL.
        camera.stop()
        #expect(await TestEnvironment.eventually(timeout: 20) { session.status.state != .streaming })
        try camera.start()
        #expect(
            await TestEnvironment.eventually(timeout: 40) {
                session.status.state == .streaming && cloud.stats.allocations >= 2
            },
            "\(session.status) \(cloud.stats)")
        #expect(
            gate.stats.admitted >= 2 && gate.stats.admitted <= gate.stats.issued,
            "one connection per allocation: \(gate.stats)")
        // An allocated URL is good once: the first one, used again, is refused.
        let used = try #require(issued.withLock { $0.first })
        let again = try await TestEnvironment.blocking {
            try runProcess("/usr/bin/ffprobe", ["-v", "error", "-rtsp_transport", "tcp", used])
        }
        #expect(again.status != 0 && gate.stats.refused >= 1, "\(again.stderr)")
    }
}
