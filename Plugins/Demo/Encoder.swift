import CFFmpeg

/// An H.264 encoder (libx264 when present, else libavcodec's default H.264 encoder) with
/// no B-frames and parameter sets out of band, as a camera would stream.
/// `@unchecked Sendable`: handed to the push thread once and used only there.
final class Encoder: @unchecked Sendable {
    private var ctx: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    let extradata: [UInt8]

    init(width: Int, height: Int, fps: Int, bitRate: Int, gop: Int) throws {
        guard let codec = avcodec_find_encoder_by_name("libx264") ?? avcodec_find_encoder(AV_CODEC_ID_H264),
            let c = avcodec_alloc_context3(codec)
        else { throw EncoderError("no H.264 encoder in this libavcodec") }
        ctx = c
        c.pointee.width = Int32(width)
        c.pointee.height = Int32(height)
        c.pointee.time_base = AVRational(num: 1, den: Int32(fps))
        c.pointee.framerate = AVRational(num: Int32(fps), den: 1)
        c.pointee.pix_fmt = AV_PIX_FMT_YUV420P
        c.pointee.gop_size = Int32(gop)
        c.pointee.max_b_frames = 0
        c.pointee.bit_rate = Int64(bitRate)
        c.pointee.thread_count = 1
        c.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER
        var opts: OpaquePointer?
        av_dict_set(&opts, "preset", "ultrafast", 0)
        av_dict_set(&opts, "tune", "zerolatency", 0)
        let rc = avcodec_open2(c, codec, &opts)
        av_dict_free(&opts)
        guard rc >= 0 else {
            avcodec_free_context(&ctx)
            throw EncoderError("cannot open H.264 encoder (\(rc))")
        }
        extradata =
            c.pointee.extradata.map { Array(UnsafeBufferPointer(start: $0, count: Int(c.pointee.extradata_size))) }
            ?? []
        frame = av_frame_alloc()
        packet = av_packet_alloc()
        guard let f = frame else { throw EncoderError("out of memory") }
        f.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        f.pointee.width = Int32(width)
        f.pointee.height = Int32(height)
        guard av_frame_get_buffer(f, 0) >= 0 else { throw EncoderError("out of memory") }
    }

    deinit {
        av_frame_free(&frame)
        av_packet_free(&packet)
        avcodec_free_context(&ctx)
    }

    /// Draws a frame into the reused buffer, encodes it and passes each packet to `emit`.
    /// Returns 0, a negative libav error, or emit's non-zero answer.
    func encode(
        pts: Int64,
        draw: (UnsafeMutablePointer<UInt8>, Int, UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<UInt8>, Int) -> Void,
        emit: (UnsafeMutablePointer<AVPacket>) -> Int32
    ) -> Int32 {
        guard let c = ctx, let f = frame, let p = packet else { return -1 }
        guard av_frame_make_writable(f) >= 0 else { return -1 }
        draw(
            f.pointee.data.0!, Int(f.pointee.linesize.0), f.pointee.data.1!, f.pointee.data.2!,
            Int(f.pointee.linesize.1))
        f.pointee.pts = pts
        var rc = avcodec_send_frame(c, f)
        guard rc >= 0 else { return rc }
        while true {
            rc = avcodec_receive_packet(c, p)
            if rc == nvr_averror(EAGAIN) || rc == nvr_averror_eof() { return 0 }
            guard rc >= 0 else { return rc }
            let answer = emit(p)
            av_packet_unref(p)
            if answer != 0 { return answer }
        }
    }
}

struct EncoderError: Error, CustomStringConvertible {
    let description: String
    init(_ m: String) { description = m }
}
