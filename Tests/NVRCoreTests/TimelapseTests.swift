import Foundation
import NVRIndex
import NVRMedia
import NVRPlayback
import NVRStorage
import TestSupport
import Testing

/// A timelapse of an hour: key frames only, at N× speed, built from the index.
@Suite struct TimelapseTests {
    /// Packet sizes and key flags of a file's video, in order (ffprobe, no decoding).
    static func packets(_ path: String) throws -> [(size: Int, key: Bool)] {
        let r = try runProcess(
            "/usr/bin/ffprobe",
            ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=size,flags", "-of", "csv=p=0", path])
        #expect(r.status == 0, "\(r.stderr)")
        return r.stdout.split(separator: "\n").compactMap { line in
            let f = line.split(separator: ",")
            guard f.count >= 2, let size = Int(f[0]) else { return nil }
            return (size, f[1].hasPrefix("K"))
        }
    }

    @Test func anHourAtSixtyAndSevenHundredTwentyTimes() throws {
        let h = try RecorderHarness()
        let start = Time90k.now() - 2 * 3600 * 90_000
        // An hour at 5 pictures a second with a key frame every 2 s: 1800 key frames.
        let clip = h.root + "/hour.ts"
        try RecorderHarness.makeClip(clip, seconds: 3600, rate: 5, gopFrames: 10)
        let cam = try h.record([clip], as: "cam", start90k: start)
        let end = start + 3600 * 90_000
        let segs = try h.completeSegments("cam")
        #expect(segs.count >= 59)

        // The key frames the hour holds, in order: what the timelapse should be made of.
        var keys: [(time: Int64, size: Int)] = []
        for s in segs {
            let m = try SegmentMedia.load(s, index: h.index, storage: h.recorder.storage, audioTimescale: nil)
            for i in m.video.indices where m.video[i].isKey { keys.append((m.videoTimes[i], Int(m.video[i].size))) }
        }
        #expect(keys.count == 1800)

        for (speed, every) in [(60, 1), (720, 12)] {
            let r = try Timelapse.build(
                index: h.index, storage: h.recorder.storage, cameraID: cam.id!, start: start, end: end, speed: speed)
            let out = h.root + "/timelapse-\(speed).mp4"
            try r.mp4.write(to: out)
            let wanted = 3600.0 / Double(speed)
            let probed = try ffprobeStreams(out)
            #expect(probed.map(\.codec) == ["h264"], "no audio, one video track")
            #expect(abs((probed.first?.duration ?? 0) - wanted) < 0.1, "\(speed)×: \(probed) for \(wanted) s")
            // Its frames: every `every`-th key frame of the hour, each whole, nothing else.
            let got = try Self.packets(out)
            let expected = stride(from: 0, to: keys.count, by: every).map { keys[$0].size }
            #expect(got.count == 1800 / every, "\(speed)×: \(got.count) frames")
            #expect(got.allSatisfy { $0.key })
            #expect(got.map(\.size) == expected, "\(speed)×: not the hour's key frames in order")
            #expect(try decodeErrors(out).isEmpty)
        }

        // A hole of a minute in the middle: the file keeps the wall clock (the picture before the
        // hole is held for its share) and lists it.
        try SegmentDeleter(index: h.index, storage: h.recorder.storage).delete([segs[30]])
        let holed = try Timelapse.build(
            index: h.index, storage: h.recorder.storage, cameraID: cam.id!, start: start, end: end, speed: 60)
        #expect(holed.gaps.count == 1)
        let out = h.root + "/holed.mp4"
        try holed.mp4.write(to: out)
        #expect(abs((try ffprobeStreams(out).first?.duration ?? 0) - 60) < 0.1)
        #expect(try Self.packets(out).count == 1800 - segs[30].frames / 10)

        #expect(throws: ExportError.self) {
            try Timelapse.build(
                index: h.index, storage: h.recorder.storage, cameraID: cam.id!, start: start, end: end, speed: 1)
        }
    }
}
