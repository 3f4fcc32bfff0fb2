import Foundation
import NVRIndex
import NVRMedia

/// One segment's samples with their wall-clock times and file offsets: what playback and
/// snapshots need to find any frame's bytes without reading video.
///
/// Complete segments come from the index. A segment still being written has only its row in
/// the index (its frames are indexed when it closes), so its fragments are read back from the
/// file's `moof` boxes — at most one segment length of box headers, never the media.
public struct SegmentMedia: Sendable {
    public var segment: SegmentRecord
    public var path: String
    public var video: [Sample]
    public var videoTimes: [Int64]
    public var videoOffsets: [Int64]
    public var audio: [Sample]
    public var audioTimes: [Int64]
    public var audioOffsets: [Int64]
    /// End of the last video frame on the wall clock.
    public var end90k: Int64

    public static func load(_ seg: SegmentRecord, index: any IndexStore, storage: StorageLayout, audioTimescale: Int?)
        throws -> SegmentMedia
    {
        let path = try storage.file(of: seg)
        var video: [Sample]
        var audio: [Sample]
        var fragments: [FragmentInfo]
        var audioStart: Int64?
        var rate = Int64(max(audioTimescale ?? 0, 0))
        if seg.state == .complete {
            guard let fr = try index.frames(segmentID: seg.id!) else {
                throw IndexError("segment \(seg.path) has no frame index (run nvr db check)")
            }
            video = try FrameIndex.decode(fr.videoIndex).map(Sample.init)
            audio = try fr.audioIndex.map { try FrameIndex.decode($0).map(Sample.init) } ?? []
            fragments = try FrameIndex.decodeFragments(fr.fragmentIndex).map(FragmentInfo.init)
            audioStart = fr.audioStart90k
        } else {
            let scan = try SegmentScanner.scan(path: path)
            video = scan.samples.first ?? []
            audio = scan.samples.count > 1 ? scan.samples[1] : []
            fragments = scan.fragments
            if scan.timescales.count > 1, scan.timescales[1] > 0 {
                rate = Int64(scan.timescales[1])
                audioStart = Timebase(1, rate).to90k(Int64(clamping: scan.firstDecodeTimes[1])).map {
                    Time90k.add(seg.start90k, $0)
                }
            }
        }
        guard let offsets = MP4Builder.offsets(video: video, audio: audio, fragments: fragments) else {
            throw IndexError("frame index of \(seg.path) disagrees with its fragments (run nvr db check)")
        }
        var videoTimes: [Int64] = []
        videoTimes.reserveCapacity(video.count)
        var t = seg.start90k
        for s in video {
            videoTimes.append(t)
            t += Int64(s.duration)
        }
        var audioTimes: [Int64] = []
        if let a0 = audioStart, rate > 0 {
            audioTimes.reserveCapacity(audio.count)
            var at: Int64 = 0
            let tb = Timebase(1, rate)
            for s in audio {
                audioTimes.append(Time90k.add(a0, tb.to90k(at) ?? 0))
                at += Int64(s.duration)
            }
        } else {
            audio = []
        }
        return SegmentMedia(
            segment: seg, path: path, video: video, videoTimes: videoTimes, videoOffsets: offsets.video,
            audio: audio, audioTimes: audioTimes, audioOffsets: audio.isEmpty ? [] : offsets.audio, end90k: t)
    }

    /// The video frame shown at `t`: the last one starting at or before it (the first if `t`
    /// is earlier than the segment).
    public func frame(at t: Int64) -> Int? {
        guard !video.isEmpty else { return nil }
        var lo = 0
        var hi = videoTimes.count  // first index with time > t
        while lo < hi {
            let mid = (lo + hi) / 2
            if videoTimes[mid] <= t { lo = mid + 1 } else { hi = mid }
        }
        return max(lo - 1, 0)
    }

    /// The frame whose start is nearest `t`.
    public func nearestFrame(to t: Int64) -> Int? {
        guard let i = frame(at: t) else { return nil }
        if i + 1 < videoTimes.count, videoTimes[i + 1] - t < t - videoTimes[i] { return i + 1 }
        return i
    }

    /// The key frame at or before frame `i`.
    public func keyFrame(before i: Int) -> Int {
        var k = i
        while k > 0 && !video[k].isKey { k -= 1 }
        return k
    }
}
