import CFFmpeg

/// Turns a camera's G.711 (µ-law, A-law) or G.726 audio into AAC with libavcodec, because MP4
/// players do not play those (browsers do not, and MP4 has no standard G.726 entry). At 8 kHz
/// mono this costs next to nothing: eight AAC frames a second. Buffers are allocated when the
/// camera connects; libavcodec's send_packet still references each packet it is given (a
/// small allocation per audio packet, 50 a second at most).
package final class AudioTranscoder {
    /// The AAC stream this produces (time base: one tick per sample).
    package private(set) var description: StreamDescription
    private var decoder: UnsafeMutablePointer<AVCodecContext>?
    private var encoder: UnsafeMutablePointer<AVCodecContext>?
    private var decoded: UnsafeMutablePointer<AVFrame>?
    private var toEncode: UnsafeMutablePointer<AVFrame>?
    private var inPacket: UnsafeMutablePointer<AVPacket>?
    private var outPacket: UnsafeMutablePointer<AVPacket>?
    /// The camera's payload, copied with the zero padding libavcodec may read past the end.
    private var inBuffer: UnsafeMutablePointer<UInt8>
    private static let maxPacket = 65_536
    private let channels: Int
    private var frameSize: Int
    /// Samples decoded but not yet encoded, one array per channel, and the time of the first.
    private var fifo: [[Float]]
    private var fifoTime: Int64 = 0

    /// The codecs this converts, by the SDP encoding name: RTP G.726 packs its codewords
    /// little-endian (RFC 3551 4.5.4), AAL2-G726 big-endian.
    package static func decoder(forEncoding e: String) -> (id: AVCodecID, bitsPerSample: Int32)? {
        switch e {
        case "PCMU": return (AV_CODEC_ID_PCM_MULAW, 8)
        case "PCMA": return (AV_CODEC_ID_PCM_ALAW, 8)
        case "G726-16": return (AV_CODEC_ID_ADPCM_G726LE, 2)
        case "G726-24": return (AV_CODEC_ID_ADPCM_G726LE, 3)
        case "G726-32": return (AV_CODEC_ID_ADPCM_G726LE, 4)
        case "G726-40": return (AV_CODEC_ID_ADPCM_G726LE, 5)
        case "AAL2-G726-16": return (AV_CODEC_ID_ADPCM_G726, 2)
        case "AAL2-G726-24": return (AV_CODEC_ID_ADPCM_G726, 3)
        case "AAL2-G726-32": return (AV_CODEC_ID_ADPCM_G726, 4)
        case "AAL2-G726-40": return (AV_CODEC_ID_ADPCM_G726, 5)
        default: return nil
        }
    }

    /// `name` is how the audio is called in errors ("PCMU").
    package init(name: String, codec: AVCodecID, bitsPerSample: Int32, sampleRate: Int32, channels: Int32) throws {
        guard (8_000...48_000).contains(sampleRate), (1...2).contains(channels) else {
            throw MediaError(.unsupported, "\(name) at \(sampleRate) Hz with \(channels) channels")
        }
        self.channels = Int(channels)
        inBuffer = UnsafeMutablePointer<UInt8>.allocate(capacity: Self.maxPacket + Int(AV_INPUT_BUFFER_PADDING_SIZE))
        inBuffer.initialize(repeating: 0, count: Self.maxPacket + Int(AV_INPUT_BUFFER_PADDING_SIZE))
        fifo = []
        frameSize = 1024
        description = StreamDescription(codec: .aac, timebaseNum: 1, timebaseDen: 1, extradata: [])

        guard let dc = avcodec_find_decoder(codec), let d = avcodec_alloc_context3(dc) else {
            throw MediaError(.codec, "no \(name) decoder in this libavcodec")
        }
        decoder = d
        d.pointee.sample_rate = sampleRate
        av_channel_layout_default(&d.pointee.ch_layout, channels)
        d.pointee.bits_per_coded_sample = bitsPerSample
        var rc = avcodec_open2(d, dc, nil)
        guard rc >= 0 else { throw MediaError.av(.codec, "cannot open the \(name) decoder", rc) }
        guard d.pointee.sample_fmt == AV_SAMPLE_FMT_S16 else {
            throw MediaError(.codec, "\(name) decoder gives an unexpected sample format")
        }

        guard let ec = avcodec_find_encoder(AV_CODEC_ID_AAC), let e = avcodec_alloc_context3(ec) else {
            throw MediaError(.codec, "no AAC encoder in this libavcodec")
        }
        encoder = e
        e.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
        e.pointee.sample_rate = sampleRate
        av_channel_layout_default(&e.pointee.ch_layout, channels)
        e.pointee.bit_rate = 24_000 * Int64(channels)
        e.pointee.time_base = AVRational(num: 1, den: sampleRate)
        e.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER)
        e.pointee.thread_count = 1
        rc = avcodec_open2(e, ec, nil)
        guard rc >= 0 else { throw MediaError.av(.codec, "cannot open the AAC encoder", rc) }
        guard let x = e.pointee.extradata, e.pointee.extradata_size > 0, e.pointee.frame_size > 0 else {
            throw MediaError(.codec, "the AAC encoder gave no AudioSpecificConfig")
        }
        frameSize = Int(e.pointee.frame_size)
        description = StreamDescription(
            codec: .aac, sampleRate: sampleRate, channels: channels, timebaseNum: 1, timebaseDen: sampleRate,
            extradata: Array(UnsafeBufferPointer(start: x, count: Int(e.pointee.extradata_size))))

        decoded = av_frame_alloc()
        toEncode = av_frame_alloc()
        inPacket = av_packet_alloc()
        outPacket = av_packet_alloc()
        guard let f = toEncode, decoded != nil, inPacket != nil, outPacket != nil else {
            throw MediaError(.codec, "out of memory")
        }
        f.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
        f.pointee.nb_samples = Int32(frameSize)
        f.pointee.sample_rate = sampleRate
        av_channel_layout_default(&f.pointee.ch_layout, channels)
        rc = av_frame_get_buffer(f, 0)
        guard rc >= 0 else { throw MediaError.av(.codec, "cannot allocate an audio frame", rc) }
        fifo = Array(repeating: [], count: Int(channels))
        for c in fifo.indices { fifo[c].reserveCapacity(Int(sampleRate)) }
    }

    deinit {
        av_packet_free(&inPacket)
        av_packet_free(&outPacket)
        av_frame_free(&decoded)
        av_frame_free(&toEncode)
        avcodec_free_context(&decoder)
        avcodec_free_context(&encoder)
        inBuffer.deallocate()
    }

    /// Decodes one packet of the camera's audio whose first sample is at `time` (in samples),
    /// and calls `aac(pts, duration, frame)` for each AAC frame that completes. The encoder's
    /// priming delay is in its timestamps, so the audio stays in step with the video.
    package func add(
        _ data: UnsafeRawBufferPointer, time: Int64, _ aac: (Int64, Int64, UnsafeRawBufferPointer) throws -> Void
    ) throws {
        // Times come from the camera (a pusher's container, an RTP clock): far out of range,
        // they are dropped rather than risk arithmetic that traps.
        guard let decoder, let decoded, let inPacket, let source = data.baseAddress, !data.isEmpty,
            data.count <= Self.maxPacket,
            time.magnitude < 1 << 60
        else { return }
        let queued = Int64(fifo[0].count)
        let late = time - (fifoTime + queued)
        // A jump of more than half a second either way (a camera clock step, a long loss)
        // restarts the timeline there. A shorter gap (lost packets) is filled with silence,
        // so what follows stays in step with the video; a small overlap is absorbed.
        if queued == 0 || late.magnitude > UInt64(description.sampleRate / 2) {
            if queued > 0 { try flushPartial(aac) }
            fifoTime = time
        } else if late > 0 {
            for c in fifo.indices { fifo[c].append(contentsOf: repeatElement(0, count: Int(late))) }
        }
        inBuffer.update(from: source.assumingMemoryBound(to: UInt8.self), count: data.count)
        inPacket.pointee.data = inBuffer
        inPacket.pointee.size = Int32(data.count)
        defer {
            inPacket.pointee.data = nil
            inPacket.pointee.size = 0
        }
        guard avcodec_send_packet(decoder, inPacket) >= 0 else { return }  // undecodable: dropped
        while avcodec_receive_frame(decoder, decoded) >= 0 {
            defer { av_frame_unref(decoded) }
            let n = Int(decoded.pointee.nb_samples)
            guard n > 0, let plane = decoded.pointee.extended_data?[0] else { continue }
            let s16 = UnsafeRawPointer(plane).assumingMemoryBound(to: Int16.self)
            for i in 0..<n {
                for c in 0..<channels { fifo[c].append(Float(s16[i * channels + c]) / 32_768) }
            }
        }
        while fifo[0].count >= frameSize { try encodeFrame(count: frameSize, aac) }
    }

    /// Encodes what is queued, padded with silence to a whole frame.
    private func flushPartial(_ aac: (Int64, Int64, UnsafeRawBufferPointer) throws -> Void) throws {
        for c in fifo.indices {
            fifo[c].append(contentsOf: repeatElement(0, count: frameSize - fifo[c].count % frameSize))
        }
        while fifo[0].count >= frameSize { try encodeFrame(count: frameSize, aac) }
    }

    private func encodeFrame(count: Int, _ aac: (Int64, Int64, UnsafeRawBufferPointer) throws -> Void) throws {
        guard let encoder, let frame = toEncode, let out = outPacket else { return }
        guard av_frame_make_writable(frame) >= 0 else { throw MediaError(.codec, "cannot write an audio frame") }
        for c in 0..<channels {
            guard let plane = frame.pointee.extended_data?[c] else { continue }
            fifo[c].withUnsafeBufferPointer { src in
                guard let from = src.baseAddress, src.count >= count else { return }
                UnsafeMutableRawPointer(plane).assumingMemoryBound(to: Float.self).update(from: from, count: count)
            }
            fifo[c].removeFirst(count)
        }
        frame.pointee.pts = fifoTime
        fifoTime += Int64(count)
        let rc = avcodec_send_frame(encoder, frame)
        guard rc >= 0 else { throw MediaError.av(.codec, "cannot encode AAC", rc) }
        while avcodec_receive_packet(encoder, out) >= 0 {
            defer { av_packet_unref(out) }
            guard let d = out.pointee.data, out.pointee.size > 0 else { continue }
            try aac(
                out.pointee.pts, out.pointee.duration > 0 ? out.pointee.duration : Int64(frameSize),
                UnsafeRawBufferPointer(start: d, count: Int(out.pointee.size)))
        }
    }
}
