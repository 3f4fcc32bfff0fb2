import CFFmpeg

/// Decodes video with libavcodec. Today: proves a segment's first key frame decodes
/// (`nvr db check --deep`); snapshots will build on it.
public enum FrameDecoder {
    /// Opens `path`, decodes its first video key frame, and returns its size; throws if it cannot.
    public static func decodeFirstKeyFrame(path: String) throws -> (width: Int32, height: Int32) {
        let d = try Demuxer(Demuxer.Options(url: path, timeoutSeconds: 10), interrupter: Interrupter())
        defer { d.close() }
        let v = d.streams[0]
        guard let codec = avcodec_find_decoder(v.codec.avCodecID), var ctx = Optional(avcodec_alloc_context3(codec)) else {
            throw MediaError(.codec, "no \(v.codec.rawValue) decoder")
        }
        defer { avcodec_free_context(&ctx) }
        guard let c = ctx else { throw MediaError(.codec, "out of memory") }
        if !v.extradata.isEmpty {
            c.pointee.extradata = av_mallocz(v.extradata.count + Int(AV_INPUT_BUFFER_PADDING_SIZE))!.assumingMemoryBound(to: UInt8.self)
            v.extradata.withUnsafeBufferPointer { c.pointee.extradata.update(from: $0.baseAddress!, count: $0.count) }
            c.pointee.extradata_size = Int32(v.extradata.count)
        }
        c.pointee.err_recognition = AV_EF_EXPLODE // a damaged frame is an error, not a concealed picture
        c.pointee.thread_count = 1
        var rc = avcodec_open2(c, codec, nil)
        guard rc >= 0 else { throw MediaError.av(.codec, "cannot open decoder", rc) }
        var frame: UnsafeMutablePointer<AVFrame>? = av_frame_alloc()
        defer { av_frame_free(&frame) }
        // Feed packets from the first key frame until a picture comes out (or 50 packets).
        var fed = 0
        while fed < 50 {
            let i = try d.read()
            guard i == 0 else { continue }
            if fed == 0 && d.packet.pointee.flags & AV_PKT_FLAG_KEY == 0 { continue }
            fed += 1
            rc = avcodec_send_packet(c, d.packet)
            guard rc >= 0 else { throw MediaError.av(.corrupt, "first key frame does not decode", rc) }
            rc = avcodec_receive_frame(c, frame)
            if rc >= 0 { return (frame!.pointee.width, frame!.pointee.height) }
            guard rc == nvr_averror(EAGAIN) else { throw MediaError.av(.corrupt, "first key frame does not decode", rc) }
        }
        throw MediaError(.corrupt, "no picture after \(fed) frames")
    }
}
