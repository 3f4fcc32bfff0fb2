import Foundation
import NVRIndex
import NVRMedia

/// Builds the MP4 for a camera's time range from the index (used by `nvr export`; the HTTP
/// view.mp4 of the playback issue serves the same VirtualMP4 with Range support).
///
/// Rules: the file starts at the key frame at or before `start` with an edit list so playback
/// begins at `start`; gaps between recordings are left out (the parts play back to back and
/// are listed in `gaps`); a codec or resolution change ends the file early (`truncatedAt`).
public struct RangeExport {
    public struct Result: Sendable {
        public var mp4: VirtualMP4
        public var gaps: [Range<Int64>]
        /// Set when a codec/resolution change cut the range short: where the file ends.
        public var truncatedAt: Int64?
        public var start90k: Int64
        public var end90k: Int64
    }

    public static func build(index: IndexDatabase, storage: StorageLayout, cameraID: Int64, start: Int64, end: Int64) throws -> Result {
        var segs = try index.segments(cameraID: cameraID, start90k: start, end90k: end).filter { $0.state == .complete && $0.end90k > start }
        guard let first = segs.first else { throw MediaError(.read, "no recordings between \(Time90k.rfc3339(start)) and \(Time90k.rfc3339(end))") }
        var truncatedAt: Int64?
        if let change = segs.firstIndex(where: { $0.videoEntryID != first.videoEntryID }) {
            truncatedAt = segs[change].start90k
            segs = Array(segs[..<change])
        }
        let withAudio = first.audioEntryID != nil && segs.allSatisfy { $0.audioEntryID == first.audioEntryID }
        guard let videoEntry = try index.sampleEntry(id: first.videoEntryID) else { throw IndexError("sample entry \(first.videoEntryID) missing") }
        let audioEntry = withAudio ? try index.sampleEntry(id: first.audioEntryID!) : nil

        var pieces: [MP4Builder.Piece] = []
        var skip: Int64 = 0
        var played: Int64 = 0
        var gaps: [Range<Int64>] = []
        var lastEnd: Int64?
        for (n, seg) in segs.enumerated() {
            guard let fr = try index.frames(segmentID: seg.id!) else { continue }
            let video = try FrameIndex.decode(fr.videoIndex).map(Sample.init)
            let audio = try fr.audioIndex.map { try FrameIndex.decode($0).map(Sample.init) } ?? []
            let fragments = try FrameIndex.decodeFragments(fr.fragmentIndex).map(FragmentInfo.init)
            guard let offsets = MP4Builder.offsets(video: video, audio: audio, fragments: fragments) else {
                throw IndexError("frame index of \(seg.path) disagrees with its fragments (run nvr db check)")
            }
            // Video: from the key frame at or before `start` (first segment) to the last frame starting before `end`.
            var times: [Int64] = []
            times.reserveCapacity(video.count)
            var t = seg.start90k
            for s in video { times.append(t); t += Int64(s.duration) }
            var from = 0
            if n == 0, start > seg.start90k {
                from = video.indices.last { video[$0].isKey && times[$0] <= start } ?? 0
                skip = max(0, start - times[from])
            }
            let to = video.indices.last { times[$0] < end }.map { $0 + 1 } ?? 0
            guard from < to else { continue }
            let picked = (from..<to).map { (sample: video[$0], offset: offsets.video[$0]) }
            played += picked.reduce(0) { $0 + Int64($1.sample.duration) }
            if let lastEnd, times[from] - lastEnd > Timeline.joinTolerance90k { gaps.append(lastEnd..<times[from]) }
            lastEnd = times[to - 1] + Int64(video[to - 1].duration)

            // Audio: samples between the first picked video frame (or `start`) and the last.
            var audioPicked: [(sample: Sample, offset: Int64)] = []
            if let audioEntry, let a0 = fr.audioStart90k {
                let rate = Int64(max(audioEntry.timescale, 1))
                let lo = max(times[from], start), hi = min(lastEnd!, end)
                var at: Int64 = 0
                for (i, s) in audio.enumerated() {
                    let time = a0 + at * 90_000 / rate
                    at += Int64(s.duration)
                    if time >= lo && time < hi { audioPicked.append((s, offsets.audio[i])) }
                }
            }
            pieces.append(MP4Builder.Piece(path: storage.absolute(seg.path), video: picked, audio: audioPicked))
        }
        guard !pieces.isEmpty else { throw MediaError(.read, "no frames between \(Time90k.rfc3339(start)) and \(Time90k.rfc3339(end))") }
        let video = MP4Builder.Track(sampleEntry: [UInt8](videoEntry.box), timescale: UInt32(videoEntry.timescale),
                                     width: UInt16(clamping: videoEntry.width), height: UInt16(clamping: videoEntry.height), isVideo: true)
        let audio = audioEntry.map { MP4Builder.Track(sampleEntry: [UInt8]($0.box), timescale: UInt32($0.timescale), isVideo: false) }
        let duration = max(played - skip, 0)
        let mp4 = MP4Builder.build(pieces: pieces, video: video, audio: audio, skip90k: skip, duration90k: duration)
        return Result(mp4: mp4, gaps: gaps, truncatedAt: truncatedAt, start90k: max(start, first.start90k), end90k: min(end, lastEnd ?? end))
    }
}
