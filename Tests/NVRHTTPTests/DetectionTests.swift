import Foundation
import NVRCameras
import NVRDetect
import NVRIndex
import NVRMedia
import NVRPlayback
import NVRRecorder
import TestSupport
import Testing

/// Person detection end to end: GStreamer cameras show a still scene that a cut-out of a picture
/// crosses from left to right (Tests/Support/rtsp_camera.py --object) — a person on one camera,
/// a dog on the other, whose scene then turns 40 % brighter — and one recorder with the
/// built-in model and ONNX Runtime from the test venv records both in events mode with
/// `--detect person --record-on person`.
@Suite(.serialized, .tags(.system)) struct DetectionTests {
    static let crossing = (start: 6.0, end: 16.0)
    static let width = 640.0, height = 360.0
    static let roll = 2.0

    func camera(_ picture: String, crop: String, light: String, t0File: String) throws -> RTSPCameraFixture {
        var o = RTSPCameraFixture.Options()
        o.pattern = "scene"
        o.fps = 10
        o.extraArguments = [
            "--motion", "\(Self.crossing.start)-\(Self.crossing.end)", "--light", light, "--t0-file", t0File,
            "--object", try DetectionFixture.picture(picture), "--object-crop", crop,
        ]
        return try RTSPCameraFixture(o)
    }

    /// Where the person is in the scene at `t` seconds after t0 (rtsp_camera.py's arithmetic:
    /// the crop scaled to half the scene's height, its left edge moving across, its top at a
    /// quarter of the height; the person inside the crop as in person.jpg).
    static func personTruth(at t: Double) -> Box {
        let crop = DetectionFixture.personCrop.split(separator: ",").compactMap { Double($0) }
        let scale = Double((Int(height) / 2) & ~1) / crop[3]
        let spriteWidth = Double(Int(crop[2] * scale) & ~1)
        let progress = (t - crossing.start) / (crossing.end - crossing.start)
        let x0 = Double(Int(progress * (width - spriteWidth)) & ~1)
        let p = DetectionFixture.personInPicture
        return Box(
            x: (x0 + (p.x - crop[0]) * scale) / width, y: (Double(Int(height) / 4) + (p.y - crop[1]) * scale) / height,
            width: p.width * scale / width, height: p.height * scale / height)
    }

    @Test func aPersonCrossingIsAPersonEventAndADogOrTheLightIsNot() async throws {
        let runtime = try DetectionFixture.runtime
        let h = try RecorderHarness(segmentSeconds: 2) { $0.detect.runtime = runtime }
        let personT0 = h.root + "/person-t0"
        let dogT0 = h.root + "/dog-t0"
        let personCam = try camera("person", crop: DetectionFixture.personCrop, light: "100-101", t0File: personT0)
        let dogCam = try camera("dog", crop: DetectionFixture.dogCrop, light: "19-23", t0File: dogT0)
        try h.add("person", ["url": personCam.url])
        try h.add("dog", ["url": dogCam.url])
        // The same scene (another media of the same camera: the same clock), with a zone on its
        // right half that people must be in to make events.
        try h.add("zoned", ["url": personCam.url + "?zoned=1"])
        var change = RecordingSettingsChange()
        change.detect = "person"
        change.mode = "events"
        change.recordOn = "person"
        change.preRollSeconds = Self.roll
        change.postRollSeconds = Self.roll
        for name in ["person", "dog"] {
            let id = try h.camera(name).id!
            try h.index.setRecordingSettings(try change.apply(to: try h.index.recordingSettings(cameraID: id)))
        }
        var zoned = RecordingSettingsChange()
        zoned.detect = "person,car"  // the person model knows no cars: it says so, and finds people
        zoned.addZones = ["right=0.5,0 1,0 1,1 0.5,1", "left=0,0 0.5,0 0.5,1 0,1"]
        zoned.addRequiredZones = ["person=right"]
        let zonedID = try h.camera("zoned").id!
        try h.index.setRecordingSettings(try zoned.apply(to: try h.index.recordingSettings(cameraID: zonedID)))
        try h.recorder.start(addDemoIfEmpty: false)
        #expect(
            TestEnvironment.wait(timeout: 20) {
                [personT0, dogT0].allSatisfy { FileManager.default.fileExists(atPath: $0) }
            })
        func t0(_ file: String) throws -> Double {
            try #require(
                Double(
                    try String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        }
        let personStart = try t0(personT0)
        let dogStart = try t0(dogT0)
        #expect(TestEnvironment.wait(timeout: 15) { h.recorder.session(named: "person")?.status.detection == "person" })
        #expect(
            TestEnvironment.wait(timeout: 15) {
                h.recorder.session(named: "zoned")?.status.detection
                    == "person (the model does not know car (it knows person))"
            }, "\(h.recorder.session(named: "zoned")?.status.detection ?? "nil")")
        // Both scenes are over (the crossing ends at 16 s, the light change at 23 s), and the
        // tracker's 3 s without a sighting has passed.
        #expect(TestEnvironment.wait(timeout: 60) { Date().timeIntervalSince1970 > max(personStart, dogStart) + 27 })
        let stats = try #require(h.recorder.runningDetector?.stats.snapshot)
        h.recorder.stop()

        let person = try h.camera("person")
        let dog = try h.camera("dog")
        let window = (Int64(personStart * 90_000) - 60 * 90_000, Int64(personStart * 90_000) + 120 * 90_000)
        let personEvents = try h.index.events(cameraID: person.id!, start90k: window.0, end90k: window.1)
        let detections = personEvents.filter { $0.source == .detection }
        try #require(detections.count == 1, "\(personEvents.map { EventSummary($0, camera: "person") })")
        let e = detections[0]
        #expect(e.type == "person" && (e.score ?? 0) > 0.8)
        let start = Double(e.start90k) / 90_000 - personStart
        let end = Double(try #require(e.end90k)) / 90_000 - personStart
        // Within 2 s: the person must be seen twice, at up to 5 pictures a second, on a machine
        // that runs other suites beside this one.
        #expect(abs(start - Self.crossing.start) < 2, "starts \(start) s after t0")
        #expect(abs(end - Self.crossing.end) < 2.5, "ends \(end) s after t0")
        // Its box, at its best sighting, is where the person was then.
        let b = try #require(e.box)
        let box = Box(x: b[0], y: b[1], width: b[2], height: b[3])
        let seen = Double(try #require(e.snapshot90k)) / 90_000 - personStart
        let truth = Self.personTruth(at: seen)
        #expect(box.iou(truth) > 0.5, "box \(box) vs the person at \(seen) s: \(truth)")

        // Its snapshot shows the box in red: the pixel on the box's left edge, halfway down.
        let shot = try Snapshots(index: h.index, storage: h.recorder.storage).frame(
            cameraID: person.id!, at: e.snapshot90k!, width: nil,
            outline: JPEGEncoder.Outline(x: b[0], y: b[1], width: b[2], height: b[3]))
        let jpeg = h.root + "/snapshot.jpg"
        try Data(shot.jpeg).write(to: URL(fileURLWithPath: jpeg))
        let rgb = try DetectionFixture.rgb(jpeg, width: Int(Self.width), height: Int(Self.height))
        let px = (Int((b[1] + b[3] / 2) * Self.height) * Int(Self.width) + Int(b[0] * Self.width) + 1) * 3
        #expect(rgb[px] > 150 && rgb[px + 1] < 100 && rgb[px + 2] < 100, "not red: \(rgb[px..<px + 3])")

        // Only the person's clip is recorded: from its pre-roll (from the buffer: up to a GOP
        // more) to its post-roll — or to when the tracker gave the person up (3 s without a
        // sighting: until then the event was open), up to a segment more.
        let segments = try h.completeSegments("person")
        let first = try #require(segments.first)
        let last = try #require(segments.last)
        #expect(first.start90k >= e.start90k - Int64((Self.roll + 1.2) * 90_000), "\(segments)")
        #expect(first.start90k <= e.start90k, "\(segments)")
        #expect(
            last.start90k + last.duration90k <= e.end90k! + Int64((max(Self.roll, 3) + 2.5) * 90_000)
                && last.start90k + last.duration90k >= e.end90k!, "\(segments)")

        // The dog crossed, and the light changed: motion, looked at, and no person — nothing
        // recorded (motion alone does not record with --record-on person).
        let dogSegments = try h.segments("dog")
        #expect(dogSegments.isEmpty, "\(dogSegments)")
        let dogEvents = try h.index.events(cameraID: dog.id!, start90k: window.0, end90k: window.1)
        #expect(dogEvents.contains { $0.source == .motion }, "the dog made no motion event")
        #expect(!dogEvents.contains { $0.source == .detection }, "\(dogEvents.map { EventSummary($0, camera: "dog") })")
        #expect(
            (stats.inferences["dog"] ?? 0) >= 5, "the detector looked at the dog \(stats.inferences["dog"] ?? 0) times"
        )
        #expect((stats.detections["person"]?["person"] ?? 0) >= 5)
        #expect(stats.detections["dog"] == nil)
        #expect(stats.count == stats.inferences.values.reduce(0, +) && stats.failures == 0)

        // The zoned camera: the person makes an event only once standing in the right half —
        // when the middle of the bottom of its box crosses x = 0.5 — and it says so.
        let zonedEvents = try h.index.events(
            cameraID: zonedID, start90k: window.0, end90k: window.1, type: "person", zone: "right", limit: 10)
        try #require(zonedEvents.count == 1, "\(zonedEvents.map { EventSummary($0, camera: "zoned") })")
        let z = zonedEvents[0]
        #expect(z.zones == ["right"], "\(z.zones ?? [])")
        var crossing = Self.crossing.start
        while crossing < Self.crossing.end {
            let b = Self.personTruth(at: crossing)
            if b.x + b.width / 2 >= 0.5 { break }
            crossing += 0.05
        }
        let zonedStart = Double(z.start90k) / 90_000 - personStart
        #expect(
            abs(zonedStart - crossing) < 1.5,
            "starts \(zonedStart) s after t0; the person reached the zone at \(crossing) s")
        // Its box and snapshot time are one sighting: the box is where the person was then.
        let zb = try #require(z.box)
        let zSeen = Double(try #require(z.snapshot90k)) / 90_000 - personStart
        let zTruth = Self.personTruth(at: zSeen)
        #expect(
            Box(x: zb[0], y: zb[1], width: zb[2], height: zb[3]).iou(zTruth) > 0.5,
            "box \(zb) vs the person at \(zSeen) s: \(zTruth)")
        // `nvr events list --zone` finds it, and nothing in the left half.
        let config = h.root + "/cli.toml"
        try "[storage]\nroot = \"\(h.root)\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        let range = ["--start", String(window.0), "--end", String(window.1), "--json", "--config", config]
        let right = try runProcess(
            TestEnvironment.nvrExecutable, ["events", "list", "--camera", "zoned", "--zone", "right"] + range)
        #expect(right.status == 0 && right.stdout.contains("\"id\" : \(z.id!)"), "\(right.stdout) \(right.stderr)")
        let left = try runProcess(
            TestEnvironment.nvrExecutable, ["events", "list", "--camera", "zoned", "--zone", "left"] + range)
        #expect(left.status == 0 && !left.stdout.contains("\"person\""), "\(left.stdout)")
        #expect(
            try h.index.events(
                cameraID: zonedID, start90k: window.0, end90k: window.1, type: nil, zone: "left", limit: 10
            )
            .isEmpty)
    }

    /// A model that cannot be loaded: the camera records on (on motion, though it was to record
    /// on people), and says why it detects nothing — live, and to `nvr camera list` (another
    /// process) through the index.
    @Test func aCorruptModelKeepsTheCameraRecording() async throws {
        let runtime = try DetectionFixture.runtime
        let dir = TestEnvironment.tempDir("corrupt-model")
        defer { TestEnvironment.cleanup(dir) }
        let model = dir + "/model.onnx"
        try Data("this is not an ONNX model".utf8).write(to: URL(fileURLWithPath: model))
        try "person\n".write(toFile: dir + "/labels.txt", atomically: true, encoding: .utf8)
        let h = try RecorderHarness(segmentSeconds: 1) {
            $0.detect.runtime = runtime
            $0.detect.model = model
            $0.detect.labels = dir + "/labels.txt"
        }
        let cam = try RTSPCameraFixture()
        try h.add("cam", ["url": cam.url])
        // In events mode, recording on people only: with no detector that falls back to every
        // event (the test pattern's moving ball is motion), not to recording nothing.
        var change = RecordingSettingsChange()
        change.detect = "person"
        change.mode = "events"
        change.recordOn = "person"
        let id = try h.camera("cam").id!
        try h.index.setRecordingSettings(try change.apply(to: try h.index.recordingSettings(cameraID: id)))
        try h.recorder.start(addDemoIfEmpty: false)
        let failed = TestEnvironment.wait(timeout: 20) {
            h.recorder.session(named: "cam")?.status.detection?.hasPrefix("failed: cannot load the model \(model)")
                ?? false
        }
        #expect(failed, "\(h.recorder.session(named: "cam")?.status.detection ?? "nil")")
        #expect(TestEnvironment.wait(timeout: 20) { ((try? h.completeSegments("cam").count) ?? 0) >= 3 })
        #expect(h.recorder.session(named: "cam")?.status.state == .streaming)
        h.recorder.stop()
        let listed = try CameraOverview.load(try h.camera("cam"), index: h.index)
        #expect(listed.detection?.hasPrefix("failed: cannot load the model") == true, "\(listed.detection ?? "nil")")
    }

    /// `nvr detect`: the configured detector on a picture file, and a file that is not one.
    @Test func detectCommandSaysWhatIsInAPicture() throws {
        let dir = TestEnvironment.tempDir("detect-cli")
        defer { TestEnvironment.cleanup(dir) }
        let config = try writeConfig(root: dir, plugins: TestEnvironment.buildDir)
        try
            (String(contentsOfFile: config, encoding: .utf8)
            + "\n[detect]\nruntime = \"\(try DetectionFixture.runtime)\"\n")
            .write(toFile: config, atomically: true, encoding: .utf8)
        let r = try runProcess(
            TestEnvironment.nvrExecutable,
            ["detect", try DetectionFixture.picture("person"), "--repeat", "5", "--json", "--config", config])
        #expect(r.status == 0, "\(r.stderr)")
        let o = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let found = try #require(o["detections"] as? [[String: Any]])
        #expect(found.count == 1 && found.first?["label"] as? String == "person", "\(r.stdout)")
        #expect(o["runs"] as? Int == 5 && (o["medianMs"] as? Double ?? 0) > 0)
        let none = try runProcess(
            TestEnvironment.nvrExecutable, ["detect", try DetectionFixture.picture("dog"), "--config", config])
        #expect(none.status == 0 && none.stdout.contains("found    nothing"), "\(none.stdout)")
        try Data("not a picture".utf8).write(to: URL(fileURLWithPath: dir + "/bad.jpg"))
        let bad = try runProcess(TestEnvironment.nvrExecutable, ["detect", dir + "/bad.jpg", "--config", config])
        #expect(bad.status != 0 && bad.stderr.contains("not a JPEG picture"), "\(bad.stderr)")
        #expect(bad.stderr.split(separator: "\n").count <= 2, "\(bad.stderr)")
    }
}
