import Foundation
import NVRIndex
import NVRMedia
import NVRRecorder
import NVRStorage
import NVRTime
import Synchronization
import TestSupport
import Testing

/// Event recording without a camera: the tracker's merging and pulses, and the recording gate
/// fed from a file with an injected clock (pre/post-roll, schedules across a DST change).
@Suite struct EventRecordingTests {
    static let sec: Int64 = 90_000

    @Test func trackerMergesOverlappingClipsAndEndsPulsesAfterQuiet() throws {
        let h = try RecorderHarness()
        let cam = try h.index.addCamera(CameraRecord(name: "t", plugin: "demo", config: "{}", created90k: 0))
        let tr = EventTracker(
            camera: cam, writer: h.recorder.writer, logger: TestEnvironment.logger, preRoll90k: 5 * Self.sec,
            postRoll90k: 10 * Self.sec)
        let s = Self.sec
        tr.begin(type: "motion", source: .motion, at: 0)
        #expect(tr.clipStart(now: 1 * s) == -5 * s)
        tr.end(type: "motion", source: .motion, at: 10 * s)
        #expect(tr.clipStart(now: 19 * s) == -5 * s, "post-roll")
        // Starts within the previous clip (14 − 5 < 10 + 10): the same event goes on.
        tr.begin(type: "motion", source: .motion, at: 14 * s)
        tr.end(type: "motion", source: .motion, at: 20 * s)
        tr.tick(now: 31 * s)
        #expect(tr.clipStart(now: 31 * s) == nil, "after end + post-roll nothing is wanted")
        // Far later: a new event. A doorbell at the same time is an event of its own.
        tr.begin(type: "motion", source: .motion, at: 100 * s)
        tr.begin(type: "doorbell", source: .plugin, at: 101 * s, until: 111 * s)
        tr.begin(type: "doorbell", source: .plugin, at: 107 * s, until: 117 * s)  // another pulse extends it
        tr.tick(now: 112 * s)
        #expect(tr.openEvents.count == 2)
        tr.tick(now: 117 * s)
        #expect(tr.openEvents.map(\.type) == ["motion"])
        tr.closeAll(at: 120 * s)
        h.recorder.writer.flush()
        let all = try h.index.events(cameraID: cam.id!, start90k: -100 * s, end90k: 1000 * s)
        #expect(all.map { [$0.start90k / s, ($0.end90k ?? -1) / s] } == [[0, 20], [100, 120], [101, 117]])
        #expect(all.map(\.type) == ["motion", "motion", "doorbell"])
    }

    @Test func pluginEventJSON() throws {
        let now: Int64 = 1_000_000 * Self.sec
        let e = try PluginEvent(
            json: #"{"type":"doorbell","phase":"pulse","score":0.5,"time90k":\#(now - Self.sec),"quiet_seconds":3}"#,
            now: now)
        #expect(
            e
                == (try PluginEvent(
                    json:
                        #"{"type":"doorbell","phase":"pulse","score":0.5,"time90k":\#(now - Self.sec),"quiet_seconds":3}"#,
                    now: now)))
        #expect(e.phase == .pulse && e.time90k == now - Self.sec && e.quiet90k == 3 * Self.sec && e.score == 0.5)
        #expect(
            try PluginEvent(json: #"{"type":"motion","phase":"start","time90k":1}"#, now: now).time90k == now,
            "a clock far off: now")
        for bad in [
            "[]", "{}", #"{"type":"motion"}"#, #"{"type":"a b","phase":"start"}"#,
            #"{"type":"motion","phase":"later"}"#, "not json",
        ] {
            #expect(throws: ConfigError.self, "\(bad)") { try PluginEvent(json: bad, now: now) }
        }
    }

    /// A 30 s, 25 fps clip with a key frame every second, fed through a gate whose clock says
    /// each packet arrives at base + its timestamp.
    /// `late(t)`: how long after its capture the packet at clip time `t` arrives.
    func feed(
        _ h: RecorderHarness, settings: RecordingSettings, base: Int64, seconds: Int = 30,
        during: (RecordingGate, Int64) -> Void = { _, _ in }, late: (Int64) -> Int64 = { _ in 0 }
    ) throws -> [SegmentRecord] {
        let clip = h.root + "/clip.ts"
        let r = try runProcess(
            "/usr/bin/ffmpeg",
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-t", String(seconds),
                "-c:v", "libx264", "-g", "25", "-bf", "0", clip,
            ])
        #expect(r.status == 0, "\(r.stderr)")
        let cam = try h.index.addCamera(CameraRecord(name: "g", plugin: "demo", config: "{}", created90k: 0))
        let now = Atomic<Int64>(base)
        let seg = Segmenter(
            camera: cam, storage: h.recorder.storage, writer: h.recorder.writer, settings: .init(segmentSeconds: 4),
            logger: TestEnvironment.logger)
        let tracker = EventTracker(
            camera: cam, writer: h.recorder.writer, logger: TestEnvironment.logger, preRoll90k: 0, postRoll90k: 0)
        let gate = RecordingGate(
            camera: cam, writer: h.recorder.writer, segmenter: seg, tracker: tracker, settings: settings,
            logger: TestEnvironment.logger, clock: { now.load(ordering: .relaxed) })
        let d = try Demuxer(Demuxer.Options(url: clip), interrupter: Interrupter())
        try gate.begin(streams: d.streams)
        let tb = d.streams[0]
        var first: Int64?
        while true {
            do {
                try d.read { p in
                    let raw = p.dts * 90_000 * Int64(tb.timebaseNum) / Int64(tb.timebaseDen)
                    let t = raw - (first ?? raw)  // MPEG-TS starts at 1.4 s; the clip's time starts at 0
                    if first == nil { first = raw }
                    now.store(base + t + late(t), ordering: .relaxed)
                    during(gate, base + t)
                    try gate.append(stream: 0, pts: t, dts: t, duration: 0, isKey: p.isKey, data: p.data)
                }
            } catch is MediaError { break }
        }
        try gate.end()
        return try h.completeSegments("g")
    }

    @Test func eventsModeKeepsPreAndPostRollAndNothingElse() throws {
        let h = try RecorderHarness()
        let s = Self.sec
        let base: Int64 = 1_800_000_000 * s
        let settings = RecordingSettings(
            mode: .events, preRoll90k: 3 * s, postRoll90k: 4 * s,
            motion: {
                var m = MotionSettings()
                m.enabled = .off
                return m
            }())
        // Two events: 10.5–14.2 s and 24.3–25.0 s into the clip, each reported when the clip reaches it.
        var actions: [(at: Int64, run: (RecordingGate) -> Void)] = [
            (10 * s + s / 2, { $0.tracker.begin(type: "test", source: .plugin, at: base + 10 * s + s / 2) }),
            (14 * s + s / 5, { $0.tracker.end(type: "test", source: .plugin, at: base + 14 * s + s / 5) }),
            (24 * s + 3 * s / 10, { $0.tracker.begin(type: "test", source: .plugin, at: base + 24 * s + 3 * s / 10) }),
            (25 * s, { $0.tracker.end(type: "test", source: .plugin, at: base + 25 * s) }),
        ]
        let segs = try feed(h, settings: settings, base: base) { gate, t in
            while let next = actions.first, t - base >= next.at {
                next.run(gate)
                actions.removeFirst()
            }
        }
        let runs = Dictionary(grouping: segs, by: \.runID).values.map { $0.sorted { $0.start90k < $1.start90k } }.sorted
        { $0[0].start90k < $1[0].start90k }
        #expect(runs.count == 2, "one recording per event")
        guard runs.count == 2 else { return }
        let frame = s / 25
        // First clip: from the key frame at or before 10.5 − 3 = 7.5 s (7 s) to 14.2 + 4 = 18.2 s.
        #expect(runs[0].first!.start90k == base + 7 * s)
        #expect(abs(runs[0].last!.end90k - (base + 18 * s + s / 5)) <= frame)
        // Second: from the key frame at or before 21.3 s (21 s) to 29 s.
        #expect(runs[1].first!.start90k == base + 21 * s)
        #expect(abs(runs[1].last!.end90k - (base + 29 * s)) <= frame)
        #expect(segs.allSatisfy { $0.hasEvent })
        for s in segs { try h.verify(s, videoCodec: "h264") }
    }

    /// Capture time is computed once, at the gate, and segments start at it: the first
    /// second arrives in one burst 1.5 s in (what libavformat read while probing), the rest
    /// 30 ms late. The first segment starts at the first frame's capture time (30 ms after
    /// it), not at its arrival; every later one exactly where the one before ends.
    @Test func segmentsStartAtTheGatesCaptureTime() throws {
        let h = try RecorderHarness()
        let s = Self.sec
        let base: Int64 = 1_800_000_000 * s
        let segs = try feed(
            h,
            settings: RecordingSettings(
                motion: {
                    var m = MotionSettings()
                    m.enabled = .off
                    return m
                }()), base: base,
            late: { t in t < s ? 3 * s / 2 - t : 30 * 90 })
        #expect(segs.count >= 6)
        #expect(Set(segs.map(\.runID)).count == 1)
        #expect(
            segs.first?.start90k == base + 30 * 90,
            "first segment starts \(Double((segs.first?.start90k ?? 0) - base) / 90) ms after capture")
        for (a, b) in zip(segs, segs.dropFirst()) {
            #expect(b.start90k == a.end90k, "a seam of \(b.start90k - a.end90k) ticks")
        }
        #expect(
            segs.last.map { abs($0.end90k - (base + 30 * 90) - 30 * s) <= s / 25 } == true,
            "the last ends with the clip")
    }

    @Test func scheduleSwitchesAtLocalTimeOnTheDayClocksGoForward() throws {
        let h = try RecorderHarness()
        let s = Self.sec
        // 2026-03-29T01:00:00Z is 03:00 CEST, the first instant of the rule (02:00 CET never happens).
        let base = Time90k.parse("2026-03-29T00:59:50Z")!
        let schedule = try RecordingSchedule("sun 03:00-04:00 continuous; * off", tz: "Europe/Paris")
        let segs = try feed(
            h,
            settings: RecordingSettings(
                mode: .off, schedule: schedule,
                motion: {
                    var m = MotionSettings()
                    m.enabled = .off
                    return m
                }()),
            base: base, seconds: 20)
        let first = try #require(segs.first)
        let boundary = Time90k.parse("2026-03-29T01:00:00Z")!
        // The mode is looked up once a second, and a recording starts at a key frame (1 s GOP).
        #expect(
            first.start90k >= boundary && first.start90k <= boundary + 2 * s,
            "recording began \(Double(first.start90k - boundary) / 90_000) s after 03:00 local")
        #expect(abs(segs.last!.end90k - (base + 20 * s)) <= s / 25 * 2, "and went on to the end")
    }
}
