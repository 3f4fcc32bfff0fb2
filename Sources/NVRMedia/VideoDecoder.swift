import CFFmpeg

/// Decodes a run of video samples (a key frame and the frames after it) with libavcodec and
/// hands back the picture of the one asked for. One decoder per request: snapshots are rare
/// next to recording, and a fresh decoder has no state to go wrong.
public final class VideoDecoder {
    private var ctx: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    /// Sample bytes plus the zero padding libavcodec may read past the end.
    private var buffer: [UInt8] = []

    /// `sampleEntry`: the track's MP4 sample entry box (avc1/hvc1…); its avcC/hvcC configures
    /// the decoder, since recorded samples are length-prefixed.
    public convenience init(sampleEntry: [UInt8]) throws {
        guard let (codec, config) = Self.decoderConfig(sampleEntry: sampleEntry) else {
            throw MediaError(
                .unsupported,
                "cannot decode sample entry '\(sampleEntry.count >= 8 ? String(decoding: sampleEntry[4..<8], as: UTF8.self) : "?")'"
            )
        }
        try self.init(codec: codec, extradata: config)
    }

    /// `strict`: a damaged frame is an error rather than a concealed picture (integrity checks).
    public init(codec: Codec, extradata: [UInt8], strict: Bool = false) throws {
        guard let av = avcodec_find_decoder(codec.avCodecID), let c = avcodec_alloc_context3(av) else {
            throw MediaError(.codec, "no \(codec.rawValue) decoder in this libavcodec")
        }
        ctx = c
        if !extradata.isEmpty {
            c.pointee.extradata = av_mallocz(extradata.count + Int(AV_INPUT_BUFFER_PADDING_SIZE))!.assumingMemoryBound(
                to: UInt8.self)
            extradata.withUnsafeBufferPointer { c.pointee.extradata.update(from: $0.baseAddress!, count: $0.count) }
            c.pointee.extradata_size = Int32(extradata.count)
        }
        c.pointee.thread_count = 1
        if strict { c.pointee.err_recognition = AV_EF_EXPLODE } else { c.pointee.flags2 |= AV_CODEC_FLAG2_FAST }
        let rc = avcodec_open2(c, av, nil)
        guard rc >= 0 else {
            avcodec_free_context(&ctx)
            throw MediaError.av(.codec, "cannot open the \(codec.rawValue) decoder", rc)
        }
        frame = av_frame_alloc()
        packet = av_packet_alloc()
    }

    deinit {
        av_packet_free(&packet)
        av_frame_free(&frame)
        avcodec_free_context(&ctx)
    }

    /// Decodes `count` samples in decode order; `read(i, into)` fills sample i's bytes.
    /// Returns the picture of sample `count - 1` (matched by its position, so reordering
    /// decoders still give the right one). The picture stays valid until the next call.
    public func decode(count: Int, sizes: (Int) -> Int, read: (Int, UnsafeMutableRawBufferPointer) throws -> Void)
        throws -> Picture
    {
        guard let ctx, let frame, let packet, count > 0 else { throw MediaError(.read, "nothing to decode") }
        let target = Int64(count - 1)
        var found = false
        func drain() throws {
            while true {
                let rc = avcodec_receive_frame(ctx, frame)
                if rc == nvr_averror(EAGAIN) || rc == nvr_averror_eof() { return }
                guard rc >= 0 else { throw MediaError.av(.corrupt, "cannot decode the picture", rc) }
                if frame.pointee.best_effort_timestamp == target || frame.pointee.pts == target {
                    found = true
                    return
                }
                av_frame_unref(frame)
            }
        }
        for i in 0..<count {
            let size = sizes(i)
            let padded = size + Int(AV_INPUT_BUFFER_PADDING_SIZE)
            if buffer.count < padded { buffer = [UInt8](repeating: 0, count: padded) }
            try buffer.withUnsafeMutableBytes { raw in
                try read(i, UnsafeMutableRawBufferPointer(rebasing: raw[0..<size]))
                raw.baseAddress!.advanced(by: size).initializeMemory(
                    as: UInt8.self, repeating: 0, count: Int(AV_INPUT_BUFFER_PADDING_SIZE))
                packet.pointee.data = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
                packet.pointee.size = Int32(size)
                packet.pointee.pts = Int64(i)
                packet.pointee.dts = Int64(i)
                packet.pointee.flags = i == 0 ? AV_PKT_FLAG_KEY : 0
                let rc = avcodec_send_packet(ctx, packet)
                packet.pointee.data = nil
                packet.pointee.size = 0
                guard rc >= 0 || rc == nvr_averror(EAGAIN) else {
                    throw MediaError.av(.corrupt, "frame \(i) does not decode", rc)
                }
            }
            try drain()
            if found { return Picture(frame) }
        }
        _ = avcodec_send_packet(ctx, nil)  // flush: a decoder with delay gives its last pictures now
        try drain()
        guard found else { throw MediaError(.corrupt, "the decoder gave no picture for that frame") }
        return Picture(frame)
    }

    /// Live decoding, one compressed frame at a time (the motion detector): returns the
    /// picture this packet completes, if any. `data` is copied into a padded buffer.
    public func decode(packet data: UnsafeRawBufferPointer, isKey: Bool) throws -> Picture? {
        guard let ctx, let frame, let packet else { return nil }
        let padded = data.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)
        if buffer.count < padded { buffer = [UInt8](repeating: 0, count: padded * 2) }
        let rc = buffer.withUnsafeMutableBytes { raw -> Int32 in
            if let base = data.baseAddress { raw.baseAddress!.copyMemory(from: base, byteCount: data.count) }
            raw.baseAddress!.advanced(by: data.count).initializeMemory(
                as: UInt8.self, repeating: 0, count: Int(AV_INPUT_BUFFER_PADDING_SIZE))
            packet.pointee.data = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
            packet.pointee.size = Int32(data.count)
            packet.pointee.flags = isKey ? AV_PKT_FLAG_KEY : 0
            defer {
                packet.pointee.data = nil
                packet.pointee.size = 0
            }
            return avcodec_send_packet(ctx, packet)
        }
        guard rc >= 0 || rc == nvr_averror(EAGAIN) else { throw MediaError.av(.corrupt, "a frame does not decode", rc) }
        av_frame_unref(frame)
        let got = avcodec_receive_frame(ctx, frame)
        if got == nvr_averror(EAGAIN) || got == nvr_averror_eof() { return nil }
        guard got >= 0 else { throw MediaError.av(.corrupt, "cannot decode the picture", got) }
        return Picture(frame)
    }

    /// The codec and its decoder configuration record (avcC/hvcC body) from a sample entry.
    package static func decoderConfig(sampleEntry e: [UInt8]) -> (Codec, [UInt8])? {
        guard e.count >= 86 else { return nil }
        let type = String(decoding: e[4..<8], as: UTF8.self)
        let (codec, child): (Codec, String)
        switch type {
        case "avc1", "avc3": (codec, child) = (.h264, "avcC")
        case "hvc1", "hev1": (codec, child) = (.h265, "hvcC")
        default: return nil
        }
        let r = BoxReader(e)
        guard let box = r.children(from: 86, to: e.count).first(where: { $0.type == child }) else { return nil }
        return (codec, Array(e[box.bodyOffset..<box.end]))
    }
}
