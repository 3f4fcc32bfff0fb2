import Foundation
import NVRIndex
import NVRMedia
import NVRRecorder
import NVRTime
import TestSupport
import Testing

/// The segmenter fed straight from real encoded files (ffmpeg), no camera in between.
@Suite struct SegmenterTests {
    func record(_ files: [String], into h: RecorderHarness) throws { try h.record(files, as: "file") }

    func makeClip(_ path: String, size: String) throws {
        try RecorderHarness.makeClip(path, seconds: 3, size: size, rate: 25, gopFrames: 25, preset: "medium")
    }

    @Test func resolutionChangeInBandStartsANewRun() throws {
        let h = try RecorderHarness()
        let a = h.root + "/a.ts"
        let b = h.root + "/b.ts"
        try makeClip(a, size: "320x240")
        try makeClip(b, size: "640x360")
        try record([a, b], into: h)
        let segs = try h.completeSegments("file")
        #expect(segs.count == 2)
        #expect(Set(segs.map(\.runID)).count == 2)
        let sizes = try segs.map { s -> [Int] in
            let e = try #require(try h.index.sampleEntry(id: s.videoEntryID))
            return [e.width, e.height]
        }
        #expect(sizes == [[320, 240], [640, 360]])
        for s in segs { try h.verify(s, videoCodec: "h264") }
        #expect(segs.map(\.frames) == [75, 75])
    }

    @Test func sameSizeStreamStaysOneRun() throws {
        let h = try RecorderHarness()
        let a = h.root + "/a.ts"
        let b = h.root + "/b.ts"
        try makeClip(a, size: "320x240")
        try makeClip(b, size: "320x240")
        try record([a, b], into: h)
        let segs = try h.completeSegments("file")
        #expect(segs.count == 1)
        #expect(segs.first?.frames == 150)
        for s in segs { try h.verify(s, videoCodec: "h264") }
    }

    /// A camera whose video stalls while its audio keeps coming (an encoder hiccup, Wi-Fi):
    /// video from 3.5 s to 5 s arrives late, in a burst, after the audio up to 5 s. Each 2-s
    /// segment must still hold the audio of its own time span — not the audio that happened to
    /// arrive while it was open (which put 3 s of audio into the 2-s segment from 2 s to 4 s).
    @Test func audioAheadOfLateVideoGoesToItsOwnSegment() throws {
        let h = try RecorderHarness()
        let clip = h.root + "/av.mp4"
        let made = try runProcess(
            "/usr/bin/ffmpeg",
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-f", "lavfi", "-i",
                "sine=frequency=440:sample_rate=48000", "-t", "8", "-c:v", "libx264", "-g", "25", "-bf", "0", "-c:a",
                "aac",
                "-b:a", "64k", clip,
            ])
        #expect(made.status == 0, "\(made.stderr)")
        let d = try Demuxer(Demuxer.Options(url: clip), interrupter: Interrupter())
        struct Packet {
            var stream: Int, pts: Int64, dts: Int64, duration: Int64, isKey: Bool, data: [UInt8], seconds: Double
        }
        var packets: [Packet] = []
        while true {
            do {
                try d.read { p in
                    let tb = d.streams[p.stream]
                    packets.append(
                        Packet(
                            stream: p.stream, pts: p.pts, dts: p.dts, duration: p.duration, isKey: p.isKey,
                            data: Array(p.data),
                            seconds: Double(p.dts) * Double(tb.timebaseNum) / Double(tb.timebaseDen)))
                }
            } catch { break }
        }
        // The arrival order: video from 3.5 s to 5 s held back until the first video frame after 5 s.
        var arrival: [Packet] = []
        var late: [Packet] = []
        for p in packets {
            if p.stream == 0 && p.seconds >= 3.5 && p.seconds < 5 {
                late.append(p)
            } else {
                if p.stream == 0 && p.seconds >= 5 {
                    arrival += late
                    late = []
                }
                arrival.append(p)
            }
        }
        #expect(late.isEmpty)
        let cam = try h.index.addCamera(CameraRecord(name: "file", plugin: "demo", config: "{}", created90k: 0))
        let seg = Segmenter(
            camera: cam, storage: h.recorder.storage, writer: h.recorder.writer, settings: .init(segmentSeconds: 2),
            logger: TestEnvironment.logger)
        try seg.begin(streams: d.streams)
        let base = Time90k.now()
        for p in arrival {
            try p.data.withUnsafeBytes { data in
                try seg.append(
                    stream: p.stream, pts: p.pts, dts: p.dts, duration: p.duration, isKey: p.isKey, data: data,
                    capture90k: base + Int64(p.seconds * 90_000))
            }
        }
        try seg.end()
        let segs = try h.completeSegments("file")
        #expect(segs.count == 4, "\(segs.map(\.duration90k))")
        for s in segs {
            let probed = try ffprobeStreams(h.path(s))
            let video = Double(s.duration90k) / 90_000
            let audio = Double(probed.count > 1 ? probed[1].frames : 0) * 1024 / 48_000
            #expect(abs(audio - video) < 0.1, "\(audio) s of audio in a \(video)-s segment")
        }
    }
}
