import Foundation
import NVRIndex
import NVRMedia

extension FuzzTargets {
    /// Where `segmentFile` writes its input: the scanner reads files with pread, as recovery does.
    private static let scratchPath = "/dev/shm/nvr-fuzz-segment-\(getpid()).mp4"

    /// A segment file as recovery and `db check` scan it (any bytes: a crash, a bad disk).
    static let segmentFile: Target = { data in
        guard FileManager.default.createFile(atPath: scratchPath, contents: Data(data)) else { return }
        defer { unlink(scratchPath) }
        guard let scanned = try? SegmentScanner.scan(path: scratchPath) else { return }
        precondition(scanned.validLength <= scanned.fileLength)
        precondition(
            scanned.samples.count == scanned.trackIDs.count && scanned.timescales.count == scanned.trackIDs.count)
        for f in scanned.fragments { precondition(f.sampleCounts.count == scanned.trackIDs.count) }
        _ = MP4Builder.offsets(
            video: scanned.samples.first ?? [], audio: scanned.samples.count > 1 ? scanned.samples[1] : [],
            fragments: scanned.fragments)
    }

    /// ISO BMFF boxes from memory: walks, finds, sample entries (codec strings, decoder
    /// configs), an init segment parsed back.
    static let mp4Boxes: Target = { data in
        let bytes = Array(data)
        let r = BoxReader(bytes)
        var at = 0
        var boxes = 0
        while let b = r.box(at: at), boxes < 10_000 {
            precondition(b.size >= b.headerSize && b.end <= bytes.count && b.end > at)
            for c in r.children(from: b.bodyOffset + BoxReader.extraHeader(b.type), to: b.end) {
                _ = r.find(["mdhd"], from: c.bodyOffset, to: c.end)
            }
            if b.type == "tkhd" { _ = r.trackID(tkhd: b) }
            if b.type == "mdhd" { _ = r.timescale(mdhd: b) }
            at = b.end
            boxes += 1
        }
        _ = CodecString.rfc6381(sampleEntry: bytes)
        _ = VideoDecoder.decoderConfig(sampleEntry: bytes)
        let stream = StreamDescription(
            codec: .h264, width: 640, height: 360, timebaseNum: 1, timebaseDen: 90_000, extradata: [])
        _ = try? InitSegment(parsing: bytes, streams: [stream])
    }

    /// The index's compact frame and fragment blobs (read back from SQLite, which a bad disk
    /// or a hand edit can damage), then the offsets a view is built from.
    static let frameIndex: Target = { data in
        let parts = pieces(data)
        let frames = (try? FrameIndex.decode(Data(parts[0]))) ?? []
        let fragments = parts.count > 1 ? ((try? FrameIndex.decodeFragments(Data(parts[1]))) ?? []) : []
        for f in fragments {
            precondition(!f.sampleCounts.isEmpty && f.sampleCounts.allSatisfy { $0 >= 0 } && f.dataOffset >= 0)
        }
        let samples = frames.map(Sample.init)
        _ = MP4Builder.offsets(video: samples, audio: [], fragments: fragments.map(FragmentInfo.init))
        // What is encoded decodes to itself.
        precondition((try? FrameIndex.decode(FrameIndex.encode(frames))) == frames)
    }
}
