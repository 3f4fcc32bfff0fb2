import Foundation
import NVRIndex
import NVRMedia

/// A timelapse of a camera's range: key frames only, each shown for its share of the wall
/// clock divided by `speed`, as one MP4 built from the index like RangeExport's (nothing is
/// decoded or re-encoded). "A day in two minutes" is speed 720.
///
/// Key frames closer together than `speed / maxFrameRate` seconds of wall clock are skipped,
/// so the file never plays faster than `maxFrameRate` pictures a second. The first picture is
/// the one showing at `start` (the key frame before it). A gap between recordings holds the
/// picture before it for the gap's share, as in RangeExport, so the file stays on the wall
/// clock; gaps are listed. No audio.
public enum Timelapse {
    public static let speeds: ClosedRange<Int> = 2...100_000
    public static let defaultFrameRate = 30

    public static func build(
        index: any IndexStore, storage: StorageLayout, cameraID: Int64, start: Int64, end: Int64, speed: Int,
        maxFrameRate: Int = defaultFrameRate
    ) throws -> RangeExport.Result {
        guard speeds.contains(speed) else {
            throw ExportError("a timelapse speed is \(speeds.lowerBound)…\(speeds.upperBound) times, not \(speed)")
        }
        let run = try RangeExport.VideoRun(index: index, cameraID: cameraID, start: start, end: end)
        let spacing = Int64(speed) * 90_000 / Int64(max(maxFrameRate, 1))

        // The picked key frames of each segment, with their wall-clock times.
        struct Pick {
            var time: Int64
            var sample: Sample
            var offset: Int64
        }
        var perSegment: [(path: String, entry: Int, picks: [Pick])] = []
        var gaps: [Range<Int64>] = []
        var lastPicked: Int64?
        var recordedEnd: Int64?
        for seg in run.segments {
            let m = try SegmentMedia.load(seg, index: index, storage: storage, audioTimescale: nil)
            guard let shown = m.frame(at: start) else { continue }
            var picks: [Pick] = []
            // From the key frame showing at `start` (or the segment's first) to the last one before `end`.
            var i = m.keyFrame(before: shown)
            while i < m.video.count && m.videoTimes[i] < end {
                let t = max(m.videoTimes[i], start)
                if m.video[i].isKey, lastPicked.map({ t - $0 >= spacing }) ?? true {
                    var s = m.video[i]
                    s.compositionOffset = 0  // one picture per sample, shown in decode order
                    picks.append(Pick(time: t, sample: s, offset: m.videoOffsets[i]))
                    lastPicked = t
                }
                i += 1
            }
            let segmentStart = m.videoTimes.first ?? seg.start90k
            if let prev = recordedEnd, segmentStart - prev > Timeline.joinTolerance90k {
                gaps.append(prev..<segmentStart)
            }
            recordedEnd = m.end90k
            guard !picks.isEmpty else { continue }
            perSegment.append((m.path, run.entryIDs.firstIndex(of: seg.videoEntryID) ?? 0, picks))
        }
        guard let firstPick = perSegment.first?.picks.first, let recordedEnd else {
            throw NothingRecorded(start: start, end: end)
        }
        let playEnd = min(end, recordedEnd)
        gaps = gaps.filter { $0.lowerBound < playEnd }

        // Each picture lasts until the next (the last until the range's end), divided by
        // `speed`, on a timeline rounded once per picture so the file's length does not drift.
        let timescale = Int64(max(run.videoEntry.timescale, 1))
        func out(_ wall: Int64) -> Int64 { (wall - firstPick.time) * timescale / (90_000 * Int64(speed)) }
        let times = perSegment.flatMap { $0.picks.map(\.time) } + [max(playEnd, lastPicked ?? playEnd)]
        var k = 0
        var pieces: [MP4Builder.Piece] = []
        for (n, s) in perSegment.enumerated() {
            var video: [(sample: Sample, offset: Int64)] = []
            for p in s.picks {
                var sample = p.sample
                sample.duration = UInt32(clamping: max(out(times[k + 1]) - out(times[k]), 1))
                video.append((sample, p.offset))
                k += 1
            }
            let changed = n > 0 && s.entry != perSegment[n - 1].entry
            pieces.append(
                MP4Builder.Piece(
                    path: s.path, video: video, audio: [], videoEntry: s.entry,
                    videoPrefix: changed ? run.inBand[s.entry] : []))
        }
        let length = pieces.reduce(Int64(0)) { $0 + $1.video.reduce(Int64(0)) { $0 + Int64($1.sample.duration) } }
        let mp4 = MP4Builder.build(
            pieces: pieces, video: run.videoTrack, audio: nil, skip90k: 0, duration90k: length * 90_000 / timescale)
        return RangeExport.Result(
            mp4: mp4, gaps: gaps, truncatedAt: run.truncatedAt, start90k: firstPick.time, end90k: playEnd)
    }
}
