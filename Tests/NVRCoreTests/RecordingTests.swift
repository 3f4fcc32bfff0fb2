import Foundation
import NVRIndex
import NVRMedia
import NVRTime
import TestSupport
import Testing

/// A recorder on a temp storage root with the given cameras, for one test.
extension RecorderHarness {
    /// Checks a segment's file against its row and frame index, and ffprobe against both.
    func verify(_ s: SegmentRecord, videoCodec: String, audioCodec: String? = nil) throws {
        let probed = try ffprobeStreams(path(s))
        #expect(probed.first?.codec == videoCodec)
        let frames = try #require(try index.frames(segmentID: s.id!))
        let video = try FrameIndex.decode(frames.videoIndex)
        #expect(video.count == s.frames)
        #expect(probed.first?.frames == s.frames, "ffprobe \(probed.first?.frames ?? -1) frames, index \(s.frames)")
        #expect(video.first?.isKey == true)
        #expect(video.reduce(0) { $0 + Int64($1.duration) } == s.duration90k)
        let attrs = try FileManager.default.attributesOfItem(atPath: path(s))
        #expect((attrs[.size] as? Int64) == s.bytes || (attrs[.size] as? Int) == Int(s.bytes))
        if let audioCodec {
            #expect(probed.count == 2 && probed[1].codec == audioCodec)
            let audio = try FrameIndex.decode(try #require(frames.audioIndex))
            // ffprobe counts the AAC frames it *decodes*. Under load (full suite, CI) it has decoded
            // one frame fewer than the file holds, once in a few dozen runs, never when the test
            // runs alone (40 tries, also with the CPUs busy); the cause is not found yet (a
            // partial first access unit from libavformat's RTSP depacketizer is the suspect).
            // The file's samples must still equal the index exactly; only the decoder's count may
            // fall one short.
            let scanned = try SegmentScanner.scan(path: path(s))
            #expect(
                scanned.samples.count == 2 && scanned.samples[1].count == audio.count,
                "file and index hold the same audio samples")
            let decoded = probed.count == 2 ? probed[1].frames : -1
            #expect(
                decoded == audio.count || decoded == audio.count - 1,
                "ffprobe decoded \(decoded) audio frames, index \(audio.count), segment \(s.runSeq) of run \(s.runID)")
        }
    }
}

@Suite(.serialized, .tags(.system)) struct RecordingTests {
    @Test func recordsRTSPCameraWithFrameCountsMatchingFFprobe() throws {
        let cam = try RTSPCameraFixture()
        let h = try RecorderHarness(segmentSeconds: 3)
        try h.add("cam", ["url": cam.url])
        let started = Time90k.now()
        try h.recorder.start(addDemoIfEmpty: false)
        #expect(TestEnvironment.wait(timeout: 20) { (try? h.completeSegments("cam").count ?? 0) ?? 0 >= 2 })
        Thread.sleep(forTimeInterval: 1)
        h.recorder.stop()
        let stopped = Time90k.now()
        let segs = try h.completeSegments("cam")
        #expect(segs.count >= 3)
        #expect(try h.segments("cam").allSatisfy { $0.state == .complete })
        for s in segs { try h.verify(s, videoCodec: "h264") }
        // One run; segments are cut at the first key frame after 3 s (1 s GOP) and follow each other.
        #expect(Set(segs.map(\.runID)).count == 1)
        for s in segs.dropLast() { #expect(abs(Double(s.duration90k) / 90_000 - 3) < 0.2) }
        for (a, b) in zip(segs, segs.dropFirst()) { #expect(abs(b.start90k - a.end90k) < 9_000) }
        // Durations add up to wall time (± 1 s for the run).
        let total = Double(segs.reduce(0) { $0 + $1.duration90k }) / 90_000
        let wall = Double(stopped - segs[0].start90k) / 90_000
        #expect(abs(total - wall) < 1, "recorded \(total) s over \(wall) s")
        #expect(segs[0].start90k >= started)
        // Files land under recordings/<camera>/<YYYY>/<MM>/<DD>/.
        #expect(segs[0].path.range(of: #"^recordings/cam/\d{4}/\d{2}/\d{2}/cam-"#, options: .regularExpression) != nil)
    }

    @Test func reconnectsAfterCameraRestartLeavingAGap() throws {
        let cam = try RTSPCameraFixture()
        let h = try RecorderHarness(segmentSeconds: 2)
        try h.add("cam", ["url": cam.url, "timeout": "3"])
        try h.recorder.start(addDemoIfEmpty: false)
        let session = try #require(h.recorder.session(named: "cam"))
        #expect(
            TestEnvironment.wait(timeout: 15) {
                session.status.state == .streaming && ((try? h.completeSegments("cam").count) ?? 0) >= 1
            })
        cam.stop()
        #expect(TestEnvironment.wait(timeout: 15) { session.status.state == .lost })
        #expect(session.status.reason != nil)
        Thread.sleep(forTimeInterval: 2)
        try cam.start()
        #expect(
            TestEnvironment.wait(timeout: 40) {
                Set(((try? h.completeSegments("cam")) ?? []).map(\.runID)).count >= 2
            }, "no second run after the camera came back; state \(session.status)")
        h.recorder.stop()
        let segs = try h.completeSegments("cam")
        let runs = Dictionary(grouping: segs, by: \.runID).values.map { $0.sorted { $0.start90k < $1.start90k } }.sorted
        { $0[0].start90k < $1[0].start90k }
        #expect(runs.count >= 2)
        let gap = runs[1][0].start90k - runs[0].last!.end90k
        #expect(gap >= 2 * 90_000, "gap between runs: \(Double(gap) / 90_000) s")
        for s in segs { try h.verify(s, videoCodec: "h264") }
    }

    @Test func recordsH265Camera() throws {
        var o = RTSPCameraFixture.Options()
        o.codec = "h265"
        let cam = try RTSPCameraFixture(o)
        let h = try RecorderHarness(segmentSeconds: 2)
        try h.add("hevc", ["url": cam.url])
        try h.recorder.start(addDemoIfEmpty: false)
        #expect(TestEnvironment.wait(timeout: 20) { ((try? h.completeSegments("hevc").count) ?? 0) >= 2 })
        h.recorder.stop()
        let segs = try h.completeSegments("hevc")
        for s in segs { try h.verify(s, videoCodec: "hevc") }
        let entry = try #require(try h.index.sampleEntry(id: segs[0].videoEntryID))
        #expect(entry.codec == "h265" && entry.width == 640 && entry.height == 360)
        #expect(entry.rfc6381.hasPrefix("hev1.") || entry.rfc6381.hasPrefix("hvc1."))
    }

    @Test func recordsAACAudioWithVideo() throws {
        var o = RTSPCameraFixture.Options()
        o.audio = true
        let cam = try RTSPCameraFixture(o)
        let h = try RecorderHarness(segmentSeconds: 2)
        try h.add("av", ["url": cam.url])
        try h.recorder.start(addDemoIfEmpty: false)
        #expect(TestEnvironment.wait(timeout: 20) { ((try? h.completeSegments("av").count) ?? 0) >= 2 })
        h.recorder.stop()
        let segs = try h.completeSegments("av")
        for s in segs {
            try h.verify(s, videoCodec: "h264", audioCodec: "aac")
            // Audio covers the segment: 48 kHz AAC is 46.875 frames a second.
            let probed = try ffprobeStreams(h.path(s))
            let videoSeconds = Double(s.duration90k) / 90_000
            #expect(abs(Double(probed[1].frames) / 46.875 - videoSeconds) < 0.5)
        }
        #expect(try h.index.sampleEntry(id: try #require(segs[0].audioEntryID))?.rfc6381 == "mp4a.40.2")
    }

    /// Cameras send AAC as RFC 3016 (MP4A-LATM) as often as RFC 3640, and many send G.711 or
    /// G.726: all are recorded as AAC, with a tone that is really there (not silence) over
    /// the whole segment, decoded by ffmpeg without a complaint; by the native RTSP client and
    /// by libavformat (rtsps, UDP and the `client=libav` option).
    @Test(arguments: [
        ("latm", "h265", 48_000, "native"), ("pcmu", "h264", 8_000, "native"), ("pcma", "h264", 8_000, "native"),
        ("g726", "h264", 8_000, "native"), ("latm", "h264", 48_000, "libav"), ("pcmu", "h264", 8_000, "libav"),
        ("g726", "h264", 8_000, "libav"),
    ])
    func recordsTheAudioFormatsCamerasSend(format: String, video: String, rate: Int, client: String) throws {
        var o = RTSPCameraFixture.Options()
        o.audio = true
        o.audioFormat = format
        o.codec = video
        let cam = try RTSPCameraFixture(o)
        let h = try RecorderHarness(segmentSeconds: 2)
        try h.add(format, ["url": cam.url, "client": client])
        try h.recorder.start(addDemoIfEmpty: false)
        #expect(TestEnvironment.wait(timeout: 20) { ((try? h.completeSegments(format).count) ?? 0) >= 2 })
        let status = h.recorder.session(named: format)?.status
        h.recorder.stop()
        #expect(status?.audio == "aac \(rate) Hz 1 ch", "\(String(describing: status))")
        if format != "latm" {
            #expect(
                status?.notes?.contains { $0.contains("recorded as AAC") } == true,
                "\(String(describing: status?.notes))")
        }
        let segs = try h.completeSegments(format)
        #expect(segs.count >= 2)
        for s in segs {
            try h.verify(s, videoCodec: video == "h265" ? "hevc" : "h264", audioCodec: "aac")
            let probed = try ffprobeStreams(h.path(s))
            let videoSeconds = Double(s.duration90k) / 90_000
            #expect(
                abs(Double(probed[1].frames) * 1024 / Double(rate) - videoSeconds) < 0.5,
                "\(probed[1].frames) audio frames in \(videoSeconds) s")
            #expect(try decodeErrors(h.path(s)) == "")
            guard videoSeconds > 1 else { continue }  // the one cut short by the stop
            let volume = try runProcess(
                "/usr/bin/ffmpeg",
                [
                    "-nostdin", "-v", "info", "-nostats", "-i", h.path(s), "-map", "0:a", "-af", "volumedetect", "-f",
                    "null", "-",
                ])
            let mean =
                volume.stderr.split(separator: "\n").first { $0.contains("mean_volume:") }
                .flatMap { Double($0.split(separator: " ").dropLast().last ?? "") } ?? -100
            #expect(mean > -30, "the tone is at \(mean) dB")
        }
        #expect(try h.index.sampleEntry(id: try #require(segs[0].audioEntryID))?.rfc6381 == "mp4a.40.2")
    }

    @Test func recordsWithLibavformatWhenAsked() throws {
        var o = RTSPCameraFixture.Options()
        o.audio = true
        let cam = try RTSPCameraFixture(o)
        let h = try RecorderHarness(segmentSeconds: 2)
        try h.add("libav", ["url": cam.url, "client": "libav"])
        try h.recorder.start(addDemoIfEmpty: false)
        #expect(TestEnvironment.wait(timeout: 20) { ((try? h.completeSegments("libav").count) ?? 0) >= 2 })
        h.recorder.stop()
        for s in try h.completeSegments("libav") { try h.verify(s, videoCodec: "h264", audioCodec: "aac") }
    }

    @Test func recordsOverUDPWhenAsked() throws {
        let cam = try RTSPCameraFixture()
        let h = try RecorderHarness(segmentSeconds: 2)
        try h.add("udp", ["url": cam.url, "transport": "udp"])
        try h.recorder.start(addDemoIfEmpty: false)
        #expect(TestEnvironment.wait(timeout: 20) { ((try? h.completeSegments("udp").count) ?? 0) >= 1 })
        h.recorder.stop()
        let segs = try h.completeSegments("udp")
        #expect(!segs.isEmpty)
        for s in segs { try h.verify(s, videoCodec: "h264") }
    }

    @Test func recordsTheDemoCamera() throws {
        let h = try RecorderHarness(segmentSeconds: 2)
        try h.recorder.start(addDemoIfEmpty: true)
        #expect(try h.index.cameras().map(\.name) == ["demo"])
        #expect(TestEnvironment.wait(timeout: 20) { ((try? h.completeSegments("demo").count) ?? 0) >= 2 })
        h.recorder.stop()
        for s in try h.completeSegments("demo") { try h.verify(s, videoCodec: "h264") }
    }
}
