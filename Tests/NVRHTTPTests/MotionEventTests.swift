import Foundation
import NVRIndex
import NVRMedia
import NVRPlayback
import NVRRecorder
import NVRTime
import TestSupport
import Testing

/// Motion detection end to end: a GStreamer camera shows a scripted scene (still, then a
/// square crossing it from 8 s to 14 s, then the whole picture 40 % brighter from 20 s to
/// 26 s); two cameras record it — one in `events` mode looking at key frames only, one in
/// `continuous` mode watching its sub-stream (every frame) — and the events, the stored
/// footage, the clip and the API are checked against the script's clock.
@Suite(.serialized, .tags(.system)) struct MotionEventTests {
    static let motion = (start: 8.0, end: 14.0)
    static let preRoll = 2.0, postRoll = 3.0

    @Test func motionEventsMatchTheSceneAndEventsModeStoresOnlyClips() async throws {
        let h = try RecorderHarness(segmentSeconds: 2)
        let t0File = h.root + "/t0"
        var o = RTSPCameraFixture.Options()
        o.pattern = "scene"
        o.fps = 10
        o.gopSeconds = 1
        o.extraArguments = ["--motion", "8-14", "--light", "20-26", "--t0-file", t0File]
        let cam = try RTSPCameraFixture(o)
        try h.add("kf", ["url": cam.url])
        // The fixture has one stream; a different URL for it makes it the camera's sub-stream.
        try h.add("all", ["url": cam.url, "substream_url": cam.url + "?sub=1"])
        let kf = try h.camera("kf")
        let all = try h.camera("all")
        var keyOnly = MotionSettings()
        keyOnly.frames = .keyframes
        var everyFrame = MotionSettings()
        everyFrame.enabled = .on
        everyFrame.frames = .all
        func json(_ m: MotionSettings) throws -> String { String(decoding: try JSONEncoder().encode(m), as: UTF8.self) }
        try h.index.setRecordingSettings(
            CameraRecordingRecord(
                cameraID: kf.id!, mode: "events", preRoll90k: Int64(Self.preRoll * 90_000),
                postRoll90k: Int64(Self.postRoll * 90_000), motion: try json(keyOnly)))
        try h.index.setRecordingSettings(
            CameraRecordingRecord(
                cameraID: all.id!, mode: "continuous", preRoll90k: Int64(Self.preRoll * 90_000),
                postRoll90k: Int64(Self.postRoll * 90_000), motion: try json(everyFrame)))
        try h.recorder.start(addDemoIfEmpty: false)
        #expect(TestEnvironment.wait(timeout: 20) { FileManager.default.fileExists(atPath: t0File) })
        let t0Seconds = try #require(
            Double(try String(contentsOfFile: t0File, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        let t0 = Int64(t0Seconds * 90_000)
        // The scene lasts 26 s; give the post-roll and a still tail time to pass.
        #expect(TestEnvironment.wait(timeout: 10) { h.recorder.session(named: "all")?.status.motion == "sub-stream" })
        #expect(
            TestEnvironment.wait(timeout: 10) {
                h.recorder.session(named: "kf")?.status.motion == "main stream, key frames"
            })
        #expect(h.recorder.session(named: "kf")?.status.mode == "events")
        #expect(TestEnvironment.wait(timeout: 60) { Date().timeIntervalSince1970 > t0Seconds + 32 })
        h.recorder.stop()

        let truthStart = t0 + Int64(Self.motion.start * 90_000)
        let truthEnd = t0 + Int64(Self.motion.end * 90_000)
        for c in [kf, all] {
            let events = try h.index.events(cameraID: c.id!, start90k: t0 - 90_000 * 60, end90k: t0 + 90_000 * 120)
            #expect(
                events.count == 1,
                "\(c.name): one motion event, none while still or from the light change: \(events.map { EventSummary($0, camera: c.name) })"
            )
            guard let e = events.first else { continue }
            #expect(e.type == "motion" && e.source == .motion)
            #expect(
                abs(e.start90k - truthStart) <= 90_000,
                "\(c.name): starts \(Double(e.start90k - truthStart) / 90_000) s off the truth")
            let end = try #require(e.end90k)
            #expect(abs(end - truthEnd) <= 90_000, "\(c.name): ends \(Double(end - truthEnd) / 90_000) s off the truth")
            #expect(e.preRoll90k == Int64(Self.preRoll * 90_000) && e.postRoll90k == Int64(Self.postRoll * 90_000))
            let snap = try #require(e.snapshot90k)
            #expect(snap >= e.start90k && snap <= end)
        }

        // Events mode: footage only from the key frame at or before start − pre-roll to end + post-roll.
        let e = try #require(try h.index.events(cameraID: kf.id!, start90k: t0, end90k: t0 + 90_000 * 120).first)
        let eEnd = try #require(e.end90k)
        let segs = try h.completeSegments("kf")
        #expect(!segs.isEmpty)
        let wantedStart = e.start90k - e.preRoll90k
        let wantedEnd = eEnd + e.postRoll90k
        let gop: Int64 = 90_000
        for s in segs {
            #expect(
                s.start90k >= wantedStart - gop - 9_000,
                "a segment starts \(Double(wantedStart - s.start90k) / 90_000) s before the clip")
            #expect(
                s.end90k <= wantedEnd + 18_000,
                "a segment ends \(Double(s.end90k - wantedEnd) / 90_000) s after the clip")
            #expect(s.hasEvent)
        }
        let covered = segs.reduce(Int64(0)) { $0 + $1.duration90k }
        #expect(covered >= wantedEnd - wantedStart - 45_000, "the clip is recorded: \(Double(covered) / 90_000) s")
        // Its first frame is a key frame at or before start − pre-roll.
        let first = try SegmentMedia.load(segs[0], index: h.index, storage: h.recorder.storage, audioTimescale: nil)
        #expect(first.video[0].isKey)
        #expect(
            first.videoTimes[0] <= wantedStart + 4_500,
            "pre-roll: footage from \(Double(wantedStart - first.videoTimes[0]) / 90_000) s before start − pre")

        // Continuous mode: everything kept, and exactly the segments touching the clip are event footage.
        let allSegs = try h.completeSegments("all")
        let allEvent = try #require(
            try h.index.events(cameraID: all.id!, start90k: t0, end90k: t0 + 90_000 * 120).first)
        let clip = (allEvent.start90k - allEvent.preRoll90k)..<((allEvent.end90k ?? 0) + allEvent.postRoll90k)
        for s in allSegs {
            let overlaps = s.start90k < clip.upperBound && s.end90k > clip.lowerBound
            #expect(
                s.hasEvent == overlaps,
                "segment \(Time90k.rfc3339(s.start90k))…\(Time90k.rfc3339(s.end90k)) marked \(s.hasEvent) for clip \(Time90k.rfc3339(clip.lowerBound))…\(Time90k.rfc3339(clip.upperBound))"
            )
        }
        #expect(allSegs.contains { !$0.hasEvent } && allSegs.contains { $0.hasEvent })

        // The API: list, one event, its clip and snapshot; errors.
        let server = try await TestServer(index: h.index, storage: h.recorder.storage)
        let list = try await server.get("/api/events?camera=kf&start=\(t0)&end=\(t0 + 90_000 * 120)")
        #expect(list.status == 200)
        let listed = try #require(list.json["events"] as? [[String: Any]])
        #expect(listed.count == 1)
        #expect(listed.first?["id"] as? Int == Int(e.id!))
        #expect(listed.first?["type"] as? String == "motion")
        let everyCamera = try await server.get("/api/events?start=\(t0)&end=\(t0 + 90_000 * 120)&type=motion")
        #expect((everyCamera.json["events"] as? [[String: Any]])?.count == 2)
        let none = try await server.get("/api/events?camera=kf&start=\(t0)&end=\(t0 + 90_000 * 120)&type=doorbell")
        #expect((none.json["events"] as? [[String: Any]])?.isEmpty == true)
        let one = try await server.get("/api/events/\(e.id!)")
        #expect(one.status == 200)
        #expect(one.json["clip"] as? String == "/api/events/\(e.id!)/clip.mp4")
        #expect(one.json["start90k"] as? Int == Int(e.start90k))

        let clipAnswer = try await server.get("/api/events/\(e.id!)/clip.mp4")
        #expect(clipAnswer.status == 200)
        #expect(clipAnswer.header("Content-Type") == "video/mp4")
        let clipStart = try #require(Int64(clipAnswer.header("X-Recording-Start90k") ?? ""))
        #expect(clipStart <= wantedStart, "the clip starts at or before start − pre-roll")
        #expect(clipStart >= wantedStart - gop - 9_000, "…at the key frame just before it")
        #expect(
            first.videoTimes.firstIndex(of: clipStart).map { first.video[$0].isKey } == true,
            "the clip starts on a key frame")
        let file = h.root + "/clip.mp4"
        try clipAnswer.body.write(to: URL(fileURLWithPath: file))
        let probe = try runProcess(
            "/usr/bin/ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", file])
        let duration = try #require(Double(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        let expected = Double(wantedEnd - clipStart) / 90_000
        #expect(abs(duration - expected) < 0.6, "clip lasts \(duration) s, expected \(expected) s")
        let errors = try decodeErrors(file)
        #expect(errors.isEmpty, "clip decodes cleanly: \(errors)")

        let snapshot = try await server.get("/api/events/\(e.id!)/snapshot.jpg?width=320")
        #expect(snapshot.status == 200)
        #expect(snapshot.header("Content-Type") == "image/jpeg")
        #expect(snapshot.body.starts(with: [0xFF, 0xD8]))

        let camera = try await server.get("/api/cameras/kf")
        #expect(
            camera.json["mode"] as? String == "events" && camera.json["motion"] as? String == "on",
            "settings of a camera not running")

        #expect(try await server.get("/api/events/99999").status == 404)
        #expect(try await server.get("/api/events/abc").status == 400)
        #expect(try await server.get("/api/events?camera=nope").status == 404)
        #expect(try await server.get("/api/events?start=yesterday").status == 400)
        #expect(try await server.get("/api/events/99999/clip.mp4").status == 404)
    }
}
