import Foundation
import NVRIndex
import NVRMedia
import NVRRecorder
import NVRTime
import TestSupport
import Testing

/// The segmenter fed straight from real encoded files (ffmpeg), no camera in between.
@Suite struct SegmenterTests {
    /// Feeds every packet of `files` in order with continuous timestamps, as one connection.
    func record(_ files: [String], into h: RecorderHarness) throws {
        let cam = try h.index.addCamera(CameraRecord(name: "file", plugin: "demo", config: "{}", created90k: 0))
        let seg = Segmenter(
            camera: cam, storage: h.recorder.storage, writer: h.recorder.writer, settings: .init(segmentSeconds: 60),
            logger: TestEnvironment.logger)
        var offset: Int64 = 0
        var began = false
        let base = Time90k.now()
        for f in files {
            let d = try Demuxer(Demuxer.Options(url: f), interrupter: Interrupter())
            if !began {
                try seg.begin(streams: d.streams)
                began = true
            }
            let tb = d.streams[0]
            var last: Int64 = 0
            while true {
                do {
                    try d.read { p in
                        let t = p.dts * 90_000 * Int64(tb.timebaseNum) / Int64(tb.timebaseDen)
                        last = max(last, t)
                        try seg.append(
                            stream: 0, pts: t + offset, dts: t + offset, duration: 0, isKey: p.isKey, data: p.data,
                            capture90k: base + t + offset)
                    }
                } catch { break }
            }
            offset += last + 3600
        }
        try seg.end()
    }

    func makeClip(_ path: String, size: String) throws {
        let r = try runProcess(
            "/usr/bin/ffmpeg",
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc=size=\(size):rate=25", "-t", "3",
                "-c:v", "libx264", "-g", "25", "-bf", "0", path,
            ])
        #expect(r.status == 0, "\(r.stderr)")
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
}
