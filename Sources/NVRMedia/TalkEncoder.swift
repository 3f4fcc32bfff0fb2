import CFFmpeg

/// Turns a talker's microphone, as PCM the page sends, into what a camera's audio back-channel
/// takes: resampled to the camera's rate in mono (libswresample), then encoded with libavcodec
/// (G.711 µ-law or A-law, or AAC-LC). Not on the recording path: it runs only while someone
/// talks, on that talker's connection.
public final class TalkEncoder {
    /// The sample formats the page may send: little-endian 16-bit integers or 32-bit floats,
    /// interleaved when there are two channels.
    public enum SampleFormat: String, Sendable, CaseIterable {
        case s16le, f32le
        var bytes: Int { self == .s16le ? 2 : 4 }
        var av: AVSampleFormat { self == .s16le ? AV_SAMPLE_FMT_S16 : AV_SAMPLE_FMT_FLT }
    }

    /// The encodings a back-channel may ask for that this sends (by their SDP names).
    public static let encodings: [String: AVCodecID] = [
        "PCMU": AV_CODEC_ID_PCM_MULAW, "PCMA": AV_CODEC_ID_PCM_ALAW, "MPEG4-GENERIC": AV_CODEC_ID_AAC,
    ]
    /// Input rates taken: what microphones and browsers use.
    public static let inputRates = 8_000...192_000

    public let format: SampleFormat
    public let inputRate: Int
    public let inputChannels: Int
    public let outputRate: Int
    private var resampler: OpaquePointer?
    private var encoder: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    /// Bytes of a sample frame split between two messages.
    private var leftover: [UInt8] = []
    /// AAC: the encoder takes whole frames (1024 samples); resampled samples wait here.
    private let aac: Bool
    private var fifo: [Float] = []

    /// Refuses, in one line, an input it cannot convert or an output it cannot make.
    public init(format: SampleFormat, rate: Int, channels: Int, encoding: String, outputRate: Int) throws {
        guard Self.inputRates.contains(rate) else {
            throw MediaError(.unsupported, "a microphone at \(rate) Hz (8000 to 192000 Hz are taken)")
        }
        guard (1...2).contains(channels) else {
            throw MediaError(.unsupported, "a microphone with \(channels) channels (1 or 2 are taken)")
        }
        guard let id = Self.encodings[encoding] else {
            throw MediaError(
                .unsupported,
                "the camera takes \(encoding.prefix(32)) audio, which the NVR cannot send (it sends PCMU, PCMA or AAC)")
        }
        guard (8_000...48_000).contains(outputRate) else {
            throw MediaError(.unsupported, "\(encoding) at \(outputRate) Hz")
        }
        self.format = format
        inputRate = rate
        inputChannels = channels
        self.outputRate = outputRate
        aac = id == AV_CODEC_ID_AAC
        let sampleFormat = aac ? AV_SAMPLE_FMT_FLTP : AV_SAMPLE_FMT_S16

        var inLayout = AVChannelLayout()
        var outLayout = AVChannelLayout()
        av_channel_layout_default(&inLayout, Int32(channels))
        av_channel_layout_default(&outLayout, 1)
        var swr: OpaquePointer?
        var rc = swr_alloc_set_opts2(
            &swr, &outLayout, sampleFormat, Int32(outputRate), &inLayout, format.av, Int32(rate), 0, nil)
        guard rc >= 0, let swr else { throw MediaError.av(.codec, "cannot set up the resampler", rc) }
        resampler = swr
        rc = swr_init(swr)
        guard rc >= 0 else { throw MediaError.av(.codec, "cannot start the resampler", rc) }

        guard let codec = avcodec_find_encoder(id), let e = avcodec_alloc_context3(codec) else {
            throw MediaError(.codec, "no \(encoding) encoder in this libavcodec")
        }
        encoder = e
        e.pointee.sample_rate = Int32(outputRate)
        e.pointee.sample_fmt = sampleFormat
        if aac { e.pointee.bit_rate = outputRate >= 32_000 ? 64_000 : 32_000 }
        av_channel_layout_default(&e.pointee.ch_layout, 1)
        e.pointee.time_base = AVRational(num: 1, den: Int32(outputRate))
        rc = avcodec_open2(e, codec, nil)
        guard rc >= 0 else { throw MediaError.av(.codec, "cannot open the \(encoding) encoder", rc) }
        frame = av_frame_alloc()
        packet = av_packet_alloc()
        guard frame != nil, packet != nil else { throw MediaError(.codec, "out of memory") }
    }

    deinit {
        swr_free(&resampler)
        avcodec_free_context(&encoder)
        av_frame_free(&frame)
        av_packet_free(&packet)
    }

    /// The camera's audio for `pcm` (any length: a sample frame cut between two calls is kept
    /// for the next): G.711 bytes as one unit, or AAC frames, one a unit (none until 1024
    /// samples have come). At most a second of input is taken per call.
    public func encode(_ pcm: [UInt8]) throws -> [[UInt8]] {
        let frameBytes = format.bytes * inputChannels
        var input = leftover + pcm
        let whole = input.count / frameBytes
        guard whole <= inputRate else {
            throw MediaError(.unsupported, "more than a second of microphone in one message")
        }
        leftover = Array(input[(whole * frameBytes)...])
        input.removeLast(input.count - whole * frameBytes)
        guard whole > 0, let swr = resampler else { return [] }
        // Room for what the resampler holds back plus what these samples make.
        let expected = swr_get_out_samples(swr, Int32(whole))
        guard expected >= 0 else { throw MediaError.av(.codec, "resampling the microphone", expected) }
        let room = Int(expected) + 16
        // One mono plane: 16-bit samples for G.711, floats for AAC (4 bytes a sample: room for both).
        var resampled = [Float](repeating: 0, count: room)
        let made: Int32 = input.withUnsafeBufferPointer { inBuf in
            resampled.withUnsafeMutableBufferPointer { outBuf in
                var inPlane: UnsafePointer<UInt8>? = inBuf.baseAddress
                var outPlane: UnsafeMutablePointer<UInt8>? = UnsafeMutableRawPointer(outBuf.baseAddress)?
                    .assumingMemoryBound(to: UInt8.self)
                return swr_convert(swr, &outPlane, Int32(room), &inPlane, Int32(whole))
            }
        }
        guard made >= 0 else { throw MediaError.av(.codec, "resampling the microphone", made) }
        guard made > 0 else { return [] }
        if aac {
            fifo += resampled.prefix(Int(made))
            var frames: [[UInt8]] = []
            while fifo.count >= Self.aacFrame {
                frames += try encodeFrame(samples: Self.aacFrame) { plane in
                    fifo.withUnsafeBytes { src in
                        if let base = src.baseAddress {
                            plane.update(from: base.assumingMemoryBound(to: UInt8.self), count: Self.aacFrame * 4)
                        }
                    }
                }
                fifo.removeFirst(Self.aacFrame)
            }
            return frames
        }
        let packets = try encodeFrame(samples: Int(made)) { plane in
            resampled.withUnsafeBytes { src in
                if let base = src.baseAddress {
                    plane.update(from: base.assumingMemoryBound(to: UInt8.self), count: Int(made) * 2)
                }
            }
        }
        return [Array(packets.joined())]
    }

    /// Samples in an AAC frame.
    static let aacFrame = 1024

    /// What the encoder still holds (AAC keeps a frame or two back): the last units of a talk.
    public func finish() throws -> [[UInt8]] {
        guard let e = encoder, avcodec_send_frame(e, nil) >= 0 else { return [] }
        return drain()
    }

    /// The packets the encoder has ready, one unit each.
    private func drain() -> [[UInt8]] {
        guard let e = encoder, let packet else { return [] }
        var out: [[UInt8]] = []
        while avcodec_receive_packet(e, packet) >= 0 {
            if let d = packet.pointee.data, packet.pointee.size > 0 {
                out.append(Array(UnsafeBufferPointer(start: d, count: Int(packet.pointee.size))))
            }
            av_packet_unref(packet)
        }
        return out
    }

    /// One frame of `samples` filled by `fill` (its one plane) through the encoder: the packets
    /// it gives back.
    private func encodeFrame(samples: Int, _ fill: (UnsafeMutablePointer<UInt8>) -> Void) throws -> [[UInt8]] {
        guard let e = encoder, let frame else { return [] }
        av_frame_unref(frame)
        frame.pointee.nb_samples = Int32(samples)
        frame.pointee.format = e.pointee.sample_fmt.rawValue
        frame.pointee.sample_rate = Int32(outputRate)
        av_channel_layout_default(&frame.pointee.ch_layout, 1)
        var rc = av_frame_get_buffer(frame, 0)
        guard rc >= 0, let plane = frame.pointee.data.0 else { throw MediaError.av(.codec, "an audio frame", rc) }
        fill(plane)
        rc = avcodec_send_frame(e, frame)
        guard rc >= 0 else { throw MediaError.av(.codec, "encoding the microphone", rc) }
        return drain()
    }
}
