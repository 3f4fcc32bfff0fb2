#if canImport(Glibc)
    import Glibc
#endif

/// Builds a VirtualMP4 from per-frame indexes: the moov comes from sample durations, sizes and
/// key flags, the mdat from byte ranges of the segment files.
public enum MP4Builder {
    /// The samples of one segment to include, and where their bytes are.
    public struct Piece: Sendable {
        public var path: String
        /// Samples in file order, with their file offsets.
        public var video: [(sample: Sample, offset: Int64)]
        public var audio: [(sample: Sample, offset: Int64)]
        /// Which of the video track's sample entries describes this piece (0 = the first).
        public var videoEntry: Int
        /// Bytes put before the piece's first video sample (a key frame): the parameter sets
        /// of its sample entry when it differs from the previous piece's.
        public var videoPrefix: [UInt8]
        public init(
            path: String, video: [(sample: Sample, offset: Int64)], audio: [(sample: Sample, offset: Int64)],
            videoEntry: Int = 0, videoPrefix: [UInt8] = []
        ) {
            self.path = path
            self.video = video
            self.audio = audio
            self.videoEntry = videoEntry
            self.videoPrefix = videoPrefix
        }
    }

    public struct Track: Sendable {
        /// The stsd entries, in order; samples name theirs through their chunks.
        public var sampleEntries: [[UInt8]]
        public var timescale: UInt32
        public var width: UInt16 = 0
        public var height: UInt16 = 0
        public var isVideo: Bool
        public init(sampleEntry: [UInt8], timescale: UInt32, width: UInt16 = 0, height: UInt16 = 0, isVideo: Bool) {
            self.init(
                sampleEntries: [sampleEntry], timescale: timescale, width: width, height: height, isVideo: isVideo)
        }
        public init(sampleEntries: [[UInt8]], timescale: UInt32, width: UInt16 = 0, height: UInt16 = 0, isVideo: Bool) {
            self.sampleEntries = sampleEntries
            self.timescale = timescale
            self.width = width
            self.height = height
            self.isVideo = isVideo
        }
    }

    /// Per-sample file offsets of one segment, from its fragment index (video samples of a
    /// fragment lie back to back from its data offset, then the audio samples).
    public static func offsets(video: [Sample], audio: [Sample], fragments: [FragmentInfo]) -> (
        video: [Int64], audio: [Int64]
    )? {
        var v: [Int64] = []
        var a: [Int64] = []
        v.reserveCapacity(video.count)
        a.reserveCapacity(audio.count)
        for f in fragments {
            var pos = f.dataOffset
            guard let nv = f.sampleCounts.first, nv >= 0 else { return nil }
            for _ in 0..<nv {
                guard v.count < video.count else { return nil }
                v.append(pos)
                pos += Int64(video[v.count - 1].size)
            }
            if f.sampleCounts.count > 1 {
                guard f.sampleCounts[1] >= 0 else { return nil }
                for _ in 0..<f.sampleCounts[1] {
                    guard a.count < audio.count else { return nil }
                    a.append(pos)
                    pos += Int64(audio[a.count - 1].size)
                }
            }
        }
        return v.count == video.count && a.count == audio.count ? (v, a) : nil
    }

    /// `skip90k`: how much of the first sample's timeline to skip with the edit list (the range
    /// starts between key frames); `duration90k`: how much to play.
    public static func build(pieces: [Piece], video: Track, audio: Track?, skip90k: Int64, duration90k: Int64)
        -> VirtualMP4
    {
        // mdat layout: per piece, video runs then audio runs; a chunk per contiguous run.
        var parts: [VirtualMP4.Part] = []
        var videoChunks: [Chunk] = []
        var audioChunks: [Chunk] = []
        var rel: Int64 = 0
        func addRuns(
            _ samples: [(sample: Sample, offset: Int64)], path: String, entry: Int, prefix: [UInt8],
            into chunks: inout [Chunk]
        ) {
            var i = 0
            // The prefix lies just before the first sample's bytes, in that sample's chunk.
            if !prefix.isEmpty, !samples.isEmpty { parts.append(.bytes(prefix)) }
            var chunkStart = rel
            while i < samples.count {
                var j = i + 1
                var end = samples[i].offset + Int64(samples[i].sample.size)
                while j < samples.count && samples[j].offset == end {
                    end += Int64(samples[j].sample.size)
                    j += 1
                }
                let length = end - samples[i].offset
                parts.append(.file(path: path, offset: samples[i].offset, length: length))
                if i == 0 { rel += Int64(prefix.count) }
                chunks.append(Chunk(rel: chunkStart, count: j - i, entry: entry))
                rel += length
                chunkStart = rel
                i = j
            }
        }
        var videoSamples: [Sample] = []
        videoSamples.reserveCapacity(pieces.reduce(0) { $0 + $1.video.count })
        for p in pieces {
            addRuns(p.video, path: p.path, entry: p.videoEntry, prefix: p.videoPrefix, into: &videoChunks)
            if audio != nil { addRuns(p.audio, path: p.path, entry: 0, prefix: [], into: &audioChunks) }
            for (k, v) in p.video.enumerated() {
                var sample = v.sample
                if k == 0 { sample.size += UInt32(p.videoPrefix.count) }
                videoSamples.append(sample)
            }
        }
        let audioSamples = audio == nil ? [] : pieces.flatMap { $0.audio.map(\.sample) }
        let mdatPayload = rel
        let large = mdatPayload + 8 > Int64(UInt32.max)

        func header(base: Int64) -> [UInt8] {
            var w = BoxWriter(capacity: 64 * 1024 + videoSamples.count * 16)
            w.box("ftyp") { w in
                w.fourcc("isom")
                w.u32(0x200)
                w.fourcc("isom")
                w.fourcc("iso2")
                w.fourcc("avc1")
                w.fourcc("mp41")
            }
            w.box("moov") { w in
                w.fullBox("mvhd", version: 0, flags: 0) { w in
                    w.u32(0)
                    w.u32(0)
                    w.u32(90_000)
                    w.u32(UInt32(clamping: duration90k))
                    w.u32(0x0001_0000)
                    w.u16(0x0100)
                    w.zeros(10)
                    matrix(&w)
                    w.zeros(24)
                    w.u32(audio == nil ? 2 : 3)
                }
                trak(
                    &w, id: 1, track: video, samples: videoSamples, chunks: videoChunks, base: base, skip: skip90k,
                    play: duration90k)
                if let audio {
                    // Audio samples are chosen from the requested start on: no skip needed.
                    trak(
                        &w, id: 2, track: audio, samples: audioSamples, chunks: audioChunks, base: base, skip: 0,
                        play: duration90k)
                }
            }
            if large {
                w.u32(1)
                w.fourcc("mdat")
                w.u64(UInt64(mdatPayload + 16))
            } else {
                w.u32(UInt32(mdatPayload + 8))
                w.fourcc("mdat")
            }
            return w.bytes
        }
        let headerSize = Int64(header(base: 0).count)
        parts.insert(.bytes(header(base: headerSize)), at: 0)
        return VirtualMP4(parts: parts, duration90k: duration90k, videoSamples: videoSamples.count)
    }

    private static func matrix(_ w: inout BoxWriter) {
        for v: UInt32 in [0x0001_0000, 0, 0, 0, 0x0001_0000, 0, 0, 0, 0x4000_0000] { w.u32(v) }
    }

    /// A run of samples back to back in the mdat, and the (0-based) sample entry describing them.
    struct Chunk {
        var rel: Int64
        var count: Int
        var entry: Int
    }

    private static func trak(
        _ w: inout BoxWriter, id: UInt32, track: Track, samples: [Sample], chunks: [Chunk],
        base: Int64, skip: Int64, play: Int64
    ) {
        let mediaDuration = samples.reduce(0) { $0 + UInt64($1.duration) }
        w.box("trak") { w in
            w.fullBox("tkhd", version: 0, flags: 3) { w in
                w.u32(0)
                w.u32(0)
                w.u32(id)
                w.u32(0)
                w.u32(UInt32(clamping: play))
                w.zeros(8)
                w.u16(0)
                w.u16(0)
                w.u16(track.isVideo ? 0 : 0x0100)
                w.u16(0)
                matrix(&w)
                w.u32(UInt32(track.width) << 16)
                w.u32(UInt32(track.height) << 16)
            }
            // The edit list starts playback at the requested time, not at the key frame before it.
            w.box("edts") { w in
                w.fullBox("elst", version: 0, flags: 0) { w in
                    w.u32(1)
                    w.u32(UInt32(clamping: play))
                    w.i32(Int32(clamping: max(skip, 0)))
                    w.u16(1)
                    w.u16(0)
                }
            }
            w.box("mdia") { w in
                w.fullBox("mdhd", version: 0, flags: 0) { w in
                    w.u32(0)
                    w.u32(0)
                    w.u32(track.timescale)
                    w.u32(UInt32(clamping: mediaDuration))
                    w.u16(0x55C4)
                    w.u16(0)
                }
                w.fullBox("hdlr", version: 0, flags: 0) { w in
                    w.u32(0)
                    if track.isVideo { w.fourcc("vide") } else { w.fourcc("soun") }
                    w.zeros(12)
                    w.append(Array((track.isVideo ? "VideoHandler" : "SoundHandler").utf8) + [0])
                }
                w.box("minf") { w in
                    if track.isVideo {
                        w.fullBox("vmhd", version: 0, flags: 1) { $0.zeros(8) }
                    } else {
                        w.fullBox("smhd", version: 0, flags: 0) { $0.zeros(4) }
                    }
                    w.box("dinf") { w in
                        w.fullBox("dref", version: 0, flags: 0) { w in
                            w.u32(1)
                            w.fullBox("url ", version: 0, flags: 1) { _ in }
                        }
                    }
                    w.box("stbl") { w in
                        w.fullBox("stsd", version: 0, flags: 0) { w in
                            w.u32(UInt32(track.sampleEntries.count))
                            for e in track.sampleEntries { w.append(e) }
                        }
                        runs(samples.map(\.duration)) { entries in
                            w.fullBox("stts", version: 0, flags: 0) { w in
                                w.u32(UInt32(entries.count))
                                for e in entries {
                                    w.u32(e.count)
                                    w.u32(e.value)
                                }
                            }
                        }
                        if samples.contains(where: { $0.compositionOffset != 0 }) {
                            runs(samples.map { UInt32(bitPattern: $0.compositionOffset) }) { entries in
                                w.fullBox("ctts", version: 1, flags: 0) { w in
                                    w.u32(UInt32(entries.count))
                                    for e in entries {
                                        w.u32(e.count)
                                        w.u32(e.value)
                                    }
                                }
                            }
                        }
                        if track.isVideo {
                            let keys = samples.indices.filter { samples[$0].isKey }
                            w.fullBox("stss", version: 0, flags: 0) { w in
                                w.u32(UInt32(keys.count))
                                for k in keys { w.u32(UInt32(k + 1)) }
                            }
                        }
                        w.fullBox("stsc", version: 0, flags: 0) { w in
                            var entries: [(first: UInt32, count: UInt32, entry: UInt32)] = []
                            for (i, c) in chunks.enumerated()
                            where entries.last.map({ $0.count != UInt32(c.count) || $0.entry != UInt32(c.entry + 1) })
                                ?? true
                            {
                                entries.append((UInt32(i + 1), UInt32(c.count), UInt32(c.entry + 1)))
                            }
                            w.u32(UInt32(entries.count))
                            for e in entries {
                                w.u32(e.first)
                                w.u32(e.count)
                                w.u32(e.entry)
                            }
                        }
                        w.fullBox("stsz", version: 0, flags: 0) { w in
                            w.u32(0)
                            w.u32(UInt32(samples.count))
                            for s in samples { w.u32(s.size) }
                        }
                        w.fullBox("co64", version: 0, flags: 0) { w in
                            w.u32(UInt32(chunks.count))
                            for c in chunks { w.u64(UInt64(base + c.rel)) }
                        }
                    }
                }
            }
        }
    }

    /// Run-length encodes values for stts/ctts.
    private static func runs(_ values: [UInt32], _ body: ([(count: UInt32, value: UInt32)]) -> Void) {
        var out: [(count: UInt32, value: UInt32)] = []
        for v in values {
            if let last = out.last, last.value == v { out[out.count - 1].count += 1 } else { out.append((1, v)) }
        }
        body(out)
    }
}
