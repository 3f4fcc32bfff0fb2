import Foundation
import NVRIndex
import NVRMedia

/// Builds the MP4 for a camera's time range from the index (`nvr export` and the HTTP
/// view.mp4 serve the same VirtualMP4).
///
/// Rules (design/range-mp4.md): the file starts at the key frame at or before `start` with an
/// edit list so playback begins with the frame showing at `start`; the file's timeline follows
/// the wall clock, so a gap between recordings holds the last picture (its sample lasts until
/// the next recording) and is listed in `gaps`; a change of parameters or resolution (a camera's
/// preview and its card) plays on, with one sample entry each and the new parameter sets in
/// the first key frame after the change; a change of codec ends the file early (`truncatedAt`).
/// Segments still being written are included up to their last complete fragment.
public struct RangeExport {
    public struct Result: Sendable {
        public var mp4: VirtualMP4
        /// Spans inside the file with no recording (> 1 s), on the wall clock.
        public var gaps: [Range<Int64>]
        /// Set when a codec change (H.264 ↔ H.265) cut the range short: where the file ends.
        public var truncatedAt: Int64?
        /// What the file covers on the wall clock (the request clipped to the recordings).
        public var start90k: Int64
        public var end90k: Int64
    }

    public static func build(index: any IndexStore, storage: StorageLayout, cameraID: Int64, start: Int64, end: Int64)
        throws -> Result
    {
        let run = try VideoRun(index: index, cameraID: cameraID, start: start, end: end)
        let (segs, entryIDs, inBand) = (run.segments, run.entryIDs, run.inBand)
        let first = segs[0]
        let withAudio = first.audioEntryID != nil && segs.allSatisfy { $0.audioEntryID == first.audioEntryID }
        let audioEntry = withAudio ? try index.sampleEntry(id: first.audioEntryID!) : nil
        let audioRate = Int64(max(audioEntry?.timescale ?? 0, 1))

        var pieces: [MP4Builder.Piece] = []
        var playStart: Int64?
        /// Where the first piece's first (key) frame is: the edit list skips from there to playStart.
        var firstPictureTime: Int64 = 0
        var lastEnd: Int64?
        var audioEnd: Int64?
        var gaps: [Range<Int64>] = []
        for seg in segs {
            let m = try SegmentMedia.load(seg, index: index, storage: storage, audioTimescale: audioEntry?.timescale)
            guard !m.video.isEmpty else { continue }
            // Video: from the key frame at or before `start` (first piece) to the last frame starting before `end`.
            var from = 0
            var shownFirst: Int64?
            if pieces.isEmpty, let f = m.frame(at: start) {
                from = m.keyFrame(before: f)
                // Playback starts at the start of the frame showing at `start`: an edit inside a
                // frame makes players (ffmpeg among them) drop that frame and show the next.
                shownFirst = m.videoTimes[f]
            }
            let to = m.videoTimes.lastIndex { $0 < end }.map { $0 + 1 } ?? 0
            guard from < to else { continue }
            let picked = (from..<to).map { (sample: m.video[$0], offset: m.videoOffsets[$0]) }
            let pieceStart = m.videoTimes[from]
            if playStart == nil {
                playStart = max(shownFirst ?? start, pieceStart)
                firstPictureTime = pieceStart
            }
            if let prev = lastEnd {
                // Keep the file on the wall clock: the previous piece's last picture lasts until this one starts.
                let gap = pieceStart - prev
                if gap > Timeline.joinTolerance90k { gaps.append(prev..<pieceStart) }
                adjustLast(&pieces[pieces.count - 1].video, by: gap)
            }
            lastEnd = m.videoTimes[to - 1] + Int64(picked[picked.count - 1].sample.duration)

            // Audio: samples between the play start and the last picked picture's end.
            var audioPicked: [(sample: Sample, offset: Int64)] = []
            if audioEntry != nil {
                let lo = playStart!
                let hi = min(lastEnd!, end)
                for i in m.audio.indices where m.audioTimes[i] >= lo && m.audioTimes[i] < hi {
                    if audioPicked.isEmpty, let prevEnd = audioEnd {
                        // Silence across a gap: stretch the previous piece's last audio sample.
                        let gap =
                            Timebase.ticks90k.rescale(Time90k.subtract(m.audioTimes[i], prevEnd), to: .rate(audioRate))
                            ?? 0
                        if let p = pieces.lastIndex(where: { !$0.audio.isEmpty }) {
                            adjustLast(&pieces[p].audio, by: gap)
                        }
                    }
                    audioPicked.append((m.audio[i], m.audioOffsets[i]))
                    audioEnd = m.audioTimes[i] + Int64(m.audio[i].duration) * 90_000 / audioRate
                }
            }
            let entry = entryIDs.firstIndex(of: seg.videoEntryID) ?? 0
            let prefix = entry != (pieces.last?.videoEntry ?? 0) ? inBand[entry] : []
            pieces.append(
                MP4Builder.Piece(
                    path: m.path, video: picked, audio: audioPicked, videoEntry: entry, videoPrefix: prefix))
        }
        guard !pieces.isEmpty, let playStart, let lastEnd else { throw NothingRecorded(start: start, end: end) }
        let video = run.videoTrack
        let audio = audioEntry.map {
            MP4Builder.Track(sampleEntry: [UInt8]($0.box), timescale: UInt32(clamping: $0.timescale), isVideo: false)
        }
        let playEnd = min(end, lastEnd)
        let skip = playStart - firstPictureTime
        let mp4 = MP4Builder.build(
            pieces: pieces, video: video, audio: audio, skip90k: skip, duration90k: max(playEnd - playStart, 0))
        return Result(mp4: mp4, gaps: gaps, truncatedAt: run.truncatedAt, start90k: playStart, end90k: playEnd)
    }

    /// The segments of a range and the video sample entries they use, in order of first use.
    /// Players that switch entries (stsc) get each one's; players that keep the first decode
    /// the rest from the parameter sets repeated at each change. Another codec, NAL length
    /// size or timescale cannot be carried that way: the run ends there (`truncatedAt`).
    struct VideoRun {
        var segments: [SegmentRecord]
        var videoEntry: SampleEntryRecord
        var entryIDs: [Int64]
        var entryBoxes: [[UInt8]]
        /// Each entry's parameter sets, as bytes to put before its first key frame.
        var inBand: [[UInt8]]
        var truncatedAt: Int64?

        init(index: any IndexStore, cameraID: Int64, start: Int64, end: Int64) throws {
            segments = try index.segments(cameraID: cameraID, start90k: start, end90k: end)
                .filter { ($0.state == .complete && $0.end90k > start) || $0.state == .writing }
            guard let first = segments.first else { throw NothingRecorded(start: start, end: end) }
            guard let videoEntry = try index.sampleEntry(id: first.videoEntryID) else {
                throw IndexError("sample entry \(first.videoEntryID) missing")
            }
            self.videoEntry = videoEntry
            let firstConfig = DecoderConfiguration(sampleEntry: [UInt8](videoEntry.box))
            entryIDs = [first.videoEntryID]
            entryBoxes = [[UInt8](videoEntry.box)]
            inBand = [firstConfig?.inBand ?? []]
            for (k, seg) in segments.enumerated() where !entryIDs.contains(seg.videoEntryID) {
                guard let fc = firstConfig, let e = try index.sampleEntry(id: seg.videoEntryID),
                    e.timescale == videoEntry.timescale,
                    let c = DecoderConfiguration(sampleEntry: [UInt8](e.box)), c.codec == fc.codec,
                    c.lengthSize == fc.lengthSize
                else {
                    truncatedAt = seg.start90k
                    segments = Array(segments[..<k])
                    break
                }
                entryIDs.append(seg.videoEntryID)
                entryBoxes.append([UInt8](e.box))
                inBand.append(c.inBand)
            }
        }

        var videoTrack: MP4Builder.Track {
            MP4Builder.Track(
                sampleEntries: entryBoxes, timescale: UInt32(clamping: videoEntry.timescale),
                width: UInt16(clamping: videoEntry.width), height: UInt16(clamping: videoEntry.height), isVideo: true)
        }
    }

    /// Lengthens (or, for a small overlap, shortens) the last sample so the next piece starts
    /// where the wall clock says it does. Never below one tick.
    private static func adjustLast(_ samples: inout [(sample: Sample, offset: Int64)], by delta: Int64) {
        guard let i = samples.indices.last, delta != 0 else { return }
        let d = Int64(samples[i].sample.duration) + delta
        samples[i].sample.duration = UInt32(clamping: max(d, 1))
    }
}
