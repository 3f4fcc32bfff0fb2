import Foundation
import NVRIndex
import NVRTime
import TestSupport
import Testing

/// Events a plugin reports (the demo plugin's event timer) become events, and in `events`
/// mode the only recordings.
@Suite(.serialized, .tags(.system)) struct PluginEventTests {
    @Test func demoTimerEventsRecordClipsInEventsMode() throws {
        let h = try RecorderHarness(segmentSeconds: 2)
        try h.add(
            "bell", plugin: "demo",
            ["event_every": "6", "event_seconds": "2", "event_type": "doorbell", "gop_seconds": "1", "fps": "10"])
        let cam = try h.camera("bell")
        try h.index.setRecordingSettings(
            CameraRecordingRecord(
                cameraID: cam.id!, mode: "events", preRoll90k: 90_000, postRoll90k: 90_000,
                motion: #"{"enabled":"off"}"#))
        try h.recorder.start(addDemoIfEmpty: false)
        #expect(
            TestEnvironment.wait(timeout: 40) {
                ((try? h.index.events(cameraID: cam.id!, start90k: 0, end90k: .max).filter { $0.end90k != nil }.count)
                    ?? 0) >= 2
            })
        Thread.sleep(forTimeInterval: 1.5)  // the second clip's post-roll
        h.recorder.stop()

        let events = try h.index.events(cameraID: cam.id!, start90k: 0, end90k: .max).filter { $0.end90k != nil }
        #expect(events.count >= 2)
        for e in events {
            #expect(e.type == "doorbell" && e.source == .plugin && e.score == 1)
            #expect(abs(Double(e.end90k! - e.start90k) / 90_000 - 2) < 0.3, "the timer's events last 2 s")
        }
        let segs = try h.completeSegments("bell")
        #expect(!segs.isEmpty)
        // Every stored second belongs to a clip: key frame ≤ start − 1 s … end + 1 s.
        for s in segs {
            let inClip = events.contains { e in
                s.start90k >= e.start90k - e.preRoll90k - 90_000 - 9_000
                    && s.end90k <= e.end90k! + e.postRoll90k + 18_000
            }
            #expect(inClip, "segment \(Time90k.rfc3339(s.start90k))…\(Time90k.rfc3339(s.end90k)) outside every clip")
        }
        // Each ended event's clip is recorded: about 1 + 2 + 1 s, one run each.
        for e in events.prefix(2) {
            let covering = segs.filter {
                $0.start90k < e.end90k! + e.postRoll90k && $0.end90k > e.start90k - e.preRoll90k
            }
            let seconds = Double(covering.reduce(0) { $0 + $1.duration90k }) / 90_000
            #expect(seconds >= 3.5 && seconds <= 5.5, "clip of event \(e.id!) is \(seconds) s")
            #expect(Set(covering.map(\.runID)).count == 1)
        }
        #expect(Set(segs.map(\.runID)).count >= 2, "a recording per event, nothing between")
    }

    @Test func settingsChangedWhileServingTakeEffect() throws {
        let h = try RecorderHarness(segmentSeconds: 1)
        try h.add("live", plugin: "demo", ["gop_seconds": "1", "fps": "10"])
        let cam = try h.camera("live")
        try h.recorder.start(addDemoIfEmpty: false)
        #expect(TestEnvironment.wait(timeout: 20) { ((try? h.completeSegments("live").count) ?? 0) >= 2 })
        #expect(h.recorder.session(named: "live")?.status.mode == "continuous")
        // As `nvr camera set live --mode off` does, from another process.
        try h.index.setRecordingSettings(CameraRecordingRecord(cameraID: cam.id!, mode: "off"))
        #expect(
            TestEnvironment.wait(timeout: 10) { h.recorder.session(named: "live")?.status.mode == "off" },
            "picked up within 5 s")
        let switched = Time90k.now()
        Thread.sleep(forTimeInterval: 3)
        h.recorder.stop()
        let last = try #require(try h.completeSegments("live").map(\.end90k).max())
        #expect(
            last <= switched + 90_000,
            "nothing recorded after the switch to off (last frame \(Double(last - switched) / 90_000) s after it)")
    }
}
