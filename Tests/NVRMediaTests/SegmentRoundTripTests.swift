import Foundation
import TestSupport
import Testing

@testable import NVRMedia

/// Demuxes a real H.264 + AAC file made by ffmpeg, writes it as a fragmented MP4 segment,
/// and checks ffprobe and our scanner agree with what was written.
@Suite struct SegmentRoundTripTests {
    @Test func writerOutputPlaysAndScansBack() throws {
        let dir = TestEnvironment.tempDir("media")
        defer { TestEnvironment.cleanup(dir) }
        let source = dir + "/src.ts"
        let make = try runProcess(
            "/usr/bin/ffmpeg",
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25",
                "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100",
                "-t", "4", "-c:v", "libx264", "-g", "25", "-bf", "0", "-c:a", "aac", source,
            ])
        #expect(make.status == 0, "\(make.stderr)")

        let d = try Demuxer(Demuxer.Options(url: source), interrupter: Interrupter())
        #expect(d.streams.count == 2)
        let streams = d.streams
        let initSegment = try InitSegment.make(streams: streams)
        #expect(initSegment.tracks[0].rfc6381.hasPrefix("avc1."))
        #expect(initSegment.tracks[1].rfc6381 == "mp4a.40.2")
        let out = dir + "/seg.mp4"
        let w = try FragmentedMP4Writer(path: out, initSegment: initSegment)
        var written = [0, 0]
        var lastDTS: Int64 = -1
        while let i = try? d.read() {
            let p = d.packet.pointee
            let tb = streams[i]
            if i == 0 {
                let dts = p.dts * 90_000 * Int64(tb.timebaseNum) / Int64(tb.timebaseDen)
                if lastDTS >= 0 { w.setLastDuration(track: 0, UInt32(dts - lastDTS)) }
                if p.flags & 1 != 0 { try w.flushFragment() }
                let buf = UnsafeRawBufferPointer(start: p.data, count: Int(p.size))
                if streams[0].isAnnexB {
                    w.appendAnnexB(
                        track: 0, decodeTime: UInt64(dts), isKey: p.flags & 1 != 0, compositionOffset: 0, data: buf)
                } else {
                    w.append(
                        track: 0, decodeTime: UInt64(dts),
                        sample: Sample(duration: 0, size: UInt32(p.size), isKey: p.flags & 1 != 0), data: buf)
                }
                lastDTS = dts
            } else {
                w.append(
                    track: 1, decodeTime: UInt64(written[1] * 1024),
                    sample: Sample(duration: 1024, size: UInt32(p.size), isKey: true),
                    data: UnsafeRawBufferPointer(start: p.data, count: Int(p.size)))
            }
            written[i] += 1
        }
        w.setLastDuration(track: 0, 3600)
        try w.finish()

        let probed = try ffprobeStreams(out)
        #expect(probed.map(\.codec) == ["h264", "aac"])
        #expect(probed[0].frames == written[0])
        #expect(probed[1].frames == written[1])

        let scanned = try SegmentScanner.scan(path: out)
        #expect(scanned.validLength == scanned.fileLength)
        #expect(scanned.samples[0].count == written[0])
        #expect(scanned.samples[1].count == written[1])
        #expect(scanned.samples[0].filter(\.isKey).count == 4)
        #expect(scanned.fragments.count >= 4)

        // A torn write (half a fragment) is cut back to the last complete fragment.
        let full = try Data(contentsOf: URL(fileURLWithPath: out))
        try full.prefix(full.count - 1000).write(to: URL(fileURLWithPath: out))
        let torn = try SegmentScanner.scan(path: out)
        #expect(torn.validLength < torn.fileLength)
        #expect(torn.fragments.count == scanned.fragments.count - 1)
        try SegmentScanner.truncate(path: out, to: torn.validLength)
        #expect(try ffprobeStreams(out)[0].frames == torn.samples[0].count)
    }
}
