import CFFmpeg

/// The ftyp + moov that starts every segment file, and what the fragments need to know.
public struct InitSegment: Sendable {
    public var bytes: [UInt8]
    public var tracks: [TrackInfo]

    /// Builds an init segment with libavformat's MP4 muxer, so codec configuration boxes
    /// (avcC, hvcC, esds) are written by well-tested code; fragments are ours.
    public static func make(streams: [StreamDescription]) throws -> InitSegment {
        var oc: UnsafeMutablePointer<AVFormatContext>?
        var rc = avformat_alloc_output_context2(&oc, nil, "mp4", nil)
        guard rc >= 0, let ctx = oc else { throw MediaError.av(.codec, "cannot create MP4 muxer", rc) }
        defer { avformat_free_context(ctx) }
        for s in streams {
            guard let st = avformat_new_stream(ctx, nil) else { throw MediaError(.codec, "cannot add stream") }
            s.fill(st.pointee.codecpar)
            st.pointee.time_base =
                s.codec.isVideo ? AVRational(num: 1, den: 90000) : AVRational(num: 1, den: max(s.sampleRate, 1))
        }
        var pb: UnsafeMutablePointer<AVIOContext>?
        rc = avio_open_dyn_buf(&pb)
        guard rc >= 0 else { throw MediaError.av(.codec, "cannot open memory buffer", rc) }
        ctx.pointee.pb = pb
        var opts: OpaquePointer?
        av_dict_set(&opts, "movflags", "frag_custom+empty_moov+default_base_moof", 0)
        av_dict_set(&opts, "video_track_timescale", "90000", 0)
        rc = avformat_write_header(ctx, &opts)
        av_dict_free(&opts)
        avio_flush(pb)
        var buf: UnsafeMutablePointer<UInt8>?
        let size = avio_close_dyn_buf(pb, &buf)
        ctx.pointee.pb = nil
        defer { av_free(buf) }
        guard rc >= 0 else {
            throw MediaError.av(
                .codec, "cannot write MP4 header for \(streams.map(\.summary).joined(separator: ", "))", rc)
        }
        let bytes = Array(UnsafeBufferPointer(start: buf, count: Int(size)))
        return try InitSegment(parsing: bytes, streams: streams)
    }

    /// Reads track ids, timescales and sample entries back from ftyp + moov bytes.
    public init(parsing bytes: [UInt8], streams: [StreamDescription]) throws {
        let r = BoxReader(bytes)
        guard let moov = r.find(["moov"]) else { throw MediaError(.corrupt, "init segment has no moov") }
        var tracks: [TrackInfo] = []
        for (i, trak) in r.children(from: moov.bodyOffset, to: moov.end).filter({ $0.type == "trak" }).enumerated() {
            guard i < streams.count,
                let tkhd = r.find(["tkhd"], from: trak.bodyOffset, to: trak.end),
                let mdhd = r.find(["mdia", "mdhd"], from: trak.bodyOffset, to: trak.end),
                let stsd = r.find(["mdia", "minf", "stbl", "stsd"], from: trak.bodyOffset, to: trak.end),
                let entry = r.box(at: stsd.bodyOffset + 8, limit: stsd.end)
            else { throw MediaError(.corrupt, "init segment track \(i) is incomplete") }
            let trackID = r.trackID(tkhd: tkhd)
            let timescale = r.timescale(mdhd: mdhd)
            let entryBytes = Array(bytes[entry.offset..<entry.end])
            tracks.append(
                TrackInfo(
                    trackID: trackID, timescale: timescale, stream: streams[i],
                    sampleEntry: entryBytes, rfc6381: CodecString.rfc6381(sampleEntry: entryBytes)))
        }
        guard tracks.count == streams.count else {
            throw MediaError(.corrupt, "init segment has \(tracks.count) tracks, expected \(streams.count)")
        }
        self.bytes = bytes
        self.tracks = tracks
    }
}
