import Foundation
import NVRIndex
import NVRMedia
import NVRPlayback
import NVRStorage
import TestSupport
import Testing

/// `nvr export` / RangeExport: one MP4 of any range, built from the index alone.
@Suite(.serialized, .tags(.system)) struct ExportTests {
    @Test func exportsAMidGOPRangeAcrossSegmentsWithAudioAndGaps() throws {
        var o = RTSPCameraFixture.Options()
        o.audio = true
        o.gopSeconds = 2
        let cam = try RTSPCameraFixture(o)
        let h = try RecorderHarness(segmentSeconds: 2)
        try h.add("cam", ["url": cam.url])
        try h.recorder.start(addDemoIfEmpty: false)
        #expect(TestEnvironment.wait(timeout: 30) { ((try? h.completeSegments("cam").count) ?? 0) >= 4 })
        h.recorder.stop()
        let segs = try h.completeSegments("cam")
        let camID = try h.camera("cam").id!

        // From 0.5 s into the first segment (between key frames) to 0.5 s before the end of the fourth.
        let start = segs[0].start90k + 45_000
        let end = segs[3].end90k - 45_000
        let r = try RangeExport.build(
            index: h.index, storage: h.recorder.storage, cameraID: camID, start: start, end: end)
        #expect(r.gaps.isEmpty)
        let out = h.root + "/range.mp4"
        try r.mp4.write(to: out)
        let size = try FileManager.default.attributesOfItem(atPath: out)[.size] as? Int
        #expect(Int64(size ?? 0) == r.mp4.size)
        let probed = try ffprobeStreams(out)
        #expect(probed.map(\.codec) == ["h264", "aac"])
        let wanted = Double(end - start) / 90_000
        #expect(abs(probed[0].duration - wanted) < 0.15, "video \(probed[0].duration) s for \(wanted) s")
        #expect(abs(probed[1].duration - wanted) < 0.3, "audio \(probed[1].duration) s for \(wanted) s")
        let errors = try decodeErrors(out)
        #expect(errors.isEmpty, "\(errors)")
        // The file begins at the key frame before `start`: every stored frame was recorded.
        #expect(r.mp4.videoSamples >= Int(wanted * 15))

        // Take out a middle segment: the file keeps the wall clock (the picture before the gap
        // is held across it) and the gap is reported.
        try SegmentDeleter(index: h.index, storage: h.recorder.storage).delete([segs[1]])
        let gapped = try RangeExport.build(
            index: h.index, storage: h.recorder.storage, cameraID: camID, start: start, end: end)
        #expect(gapped.gaps.count == 1)
        #expect(abs(gapped.gaps[0].lowerBound - segs[1].start90k) < 9_000)
        let out2 = h.root + "/gapped.mp4"
        try gapped.mp4.write(to: out2)
        #expect(try decodeErrors(out2).isEmpty)
        #expect(abs(try ffprobeStreams(out2)[0].duration - wanted) < 0.15)
        #expect(gapped.mp4.videoSamples < r.mp4.videoSamples)

        // Nothing there: a clear error.
        #expect {
            try RangeExport.build(index: h.index, storage: h.recorder.storage, cameraID: camID, start: 0, end: 90_000)
        } throws: { "\($0)".contains("nothing recorded between") }
    }
}
