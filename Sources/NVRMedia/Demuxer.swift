import CFFmpeg
import Foundation
import NVRTime

/// An input opened with libavformat (RTSP, UDP MPEG-TS, RTMP, HLS, files): the streams the
/// recorder keeps and a packet reader that reuses one AVPacket.
public final class Demuxer {
    public struct Options: Sendable {
        public var url: String
        /// Input format name ("rtsp", "mpegts", "flv"...), nil to probe.
        public var format: String?
        /// libavformat options, e.g. rtsp_transport=tcp.
        public var avOptions: [String: String]
        /// Seconds any one open or read may block before it fails.
        public var timeoutSeconds: Double
        /// Seconds avformat_open_input may take, when not `timeoutSeconds`; 0 = no deadline
        /// (a listening input waits for its camera until the interrupter stops it).
        public var openTimeoutSeconds: Double?
        /// Keep G.711/G.726 audio by converting it to AAC, in what `read(_:)` hands on (a live
        /// camera). Off, such audio is left out and said in `notes`.
        public var convertAudio: Bool
        public init(
            url: String, format: String? = nil, avOptions: [String: String] = [:], timeoutSeconds: Double = 10,
            openTimeoutSeconds: Double? = nil, convertAudio: Bool = false
        ) {
            self.url = url
            self.format = format
            self.avOptions = avOptions
            self.timeoutSeconds = timeoutSeconds
            self.openTimeoutSeconds = openTimeoutSeconds
            self.convertAudio = convertAudio
        }
    }

    /// A kept stream: its description and its index in the input.
    public struct Stream: Sendable {
        public var inputIndex: Int32
        public var description: StreamDescription
    }

    private var ctx: UnsafeMutablePointer<AVFormatContext>?
    private let interrupter: Interrupter
    private let timeout: Double
    /// UDP inputs fail a read with EIO when their own `timeout` passes without a datagram.
    private var isUDP = false
    /// Kept streams: the first video stream first, then the first AAC stream if any.
    public private(set) var keptStreams: [Stream] = []
    /// Input stream index → kept stream index (-1 = dropped).
    private var map: [Int32] = []
    public let packet: UnsafeMutablePointer<AVPacket>
    /// Bit rate the input reports (bits/s), 0 if unknown.
    public private(set) var bitRate: Int64 = 0
    /// Frame rate of the video stream as the input reports it.
    public private(set) var frameRate: Double = 0

    /// What the input cannot record as it is, and why (for the camera's status).
    public private(set) var notes: [String] = []
    /// Converts the kept audio stream to AAC (`Options.convertAudio`), and the audio's time base.
    private(set) var audioConverter: AudioTranscoder?
    private(set) var audioTimebase = Timebase(1, 1)

    /// Custom I/O for a `RandomAccessSource` input (nil for URLs).
    private var io: CustomIO?

    /// Opens a file that is read through `source` (e.g. a camera's card over HTTP Range) rather
    /// than a URL. `name` is for errors.
    public convenience init(
        source: any RandomAccessSource, name: String, format: String? = nil, interrupter: Interrupter,
        timeoutSeconds: Double = 60
    ) throws {
        try self.init(
            Options(url: name, format: format, timeoutSeconds: timeoutSeconds), interrupter: interrupter,
            io: CustomIO(source))
    }

    public convenience init(_ options: Options, interrupter: Interrupter) throws {
        try self.init(options, interrupter: interrupter, io: nil)
    }

    private init(_ options: Options, interrupter: Interrupter, io: CustomIO?) throws {
        self.interrupter = interrupter
        self.io = io
        self.isUDP = options.url.lowercased().hasPrefix("udp:")
        self.timeout = options.timeoutSeconds
        guard let pkt = av_packet_alloc() else { throw MediaError(.open, "out of memory") }
        packet = pkt
        ctx = avformat_alloc_context()
        guard let c = ctx else { throw MediaError(.open, "out of memory") }
        c.pointee.interrupt_callback = AVIOInterruptCB(
            callback: Interrupter.callback,
            opaque: Unmanaged.passUnretained(interrupter).toOpaque())
        if let io {
            c.pointee.pb = io.context
            c.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        }
        var dict: OpaquePointer?
        for (k, v) in options.avOptions { av_dict_set(&dict, k, v, 0) }
        // Socket timeout (µs) for protocols that honour it, in addition to our deadline.
        if options.url.hasPrefix("rtsp") && options.avOptions["timeout"] == nil {
            av_dict_set(&dict, "timeout", String(Int(options.timeoutSeconds * 1_000_000)), 0)
        }
        let fmt = options.format.flatMap { av_find_input_format($0) }
        let openTimeout = options.openTimeoutSeconds ?? options.timeoutSeconds
        interrupter.forgetRefusal()
        if openTimeout > 0 { interrupter.arm(seconds: openTimeout) } else { interrupter.disarm() }
        // The RTMP listener's stream-key check (see RTMPKeyCheck) runs inside this call.
        let listening = options.url.lowercased().hasPrefix("rtmp") && options.avOptions["listen"] == "1"
        if listening { RTMPKeyCheck.begin(interrupter) }
        var rc = avformat_open_input(&ctx, options.url, fmt, &dict)
        if listening { RTMPKeyCheck.end() }
        av_dict_free(&dict)
        if rc < 0 {
            interrupter.disarm()
            throw Demuxer.describe(rc, "cannot open \(Demuxer.redact(options.url))", interrupter)
        }
        interrupter.arm(seconds: options.timeoutSeconds)
        rc = avformat_find_stream_info(ctx, nil)
        interrupter.disarm()
        if rc < 0 {
            close()
            throw Demuxer.describe(rc, "cannot read stream info from \(Demuxer.redact(options.url))", interrupter)
        }
        selectStreams(convertAudio: options.convertAudio)
        if keptStreams.isEmpty || !keptStreams[0].description.codec.isVideo {
            close()
            throw MediaError(.unsupported, "\(Demuxer.redact(options.url)) has no H.264 or H.265 video stream")
        }
    }

    deinit {
        close()
        freePacket(packet)
    }

    private func selectStreams(convertAudio: Bool) {
        guard let c = ctx else { return }
        let n = Int(c.pointee.nb_streams)
        map = Array(repeating: -1, count: n)
        var video: Stream?
        var audio: Stream?
        for i in 0..<n {
            guard let st = c.pointee.streams[i], let d = StreamDescription(st) else { continue }
            if d.codec.isVideo, video == nil {
                video = Stream(inputIndex: Int32(i), description: d)
                let r = st.pointee.avg_frame_rate.den != 0 ? st.pointee.avg_frame_rate : st.pointee.r_frame_rate
                if r.den != 0 { frameRate = Double(r.num) / Double(r.den) }
            } else if !d.codec.isVideo, audio == nil {
                audio = Stream(inputIndex: Int32(i), description: d)
            }
        }
        // Audio the recorder does not store as it comes: converted to AAC, or said.
        if audio == nil,
            let i = (0..<n).first(where: {
                c.pointee.streams[$0]?.pointee.codecpar?.pointee.codec_type == AVMEDIA_TYPE_AUDIO
            }),
            let st = c.pointee.streams[i], let par = st.pointee.codecpar
        {
            let name = String(cString: avcodec_get_name(par.pointee.codec_id))
            let g711 = [AV_CODEC_ID_PCM_MULAW, AV_CODEC_ID_PCM_ALAW, AV_CODEC_ID_ADPCM_G726, AV_CODEC_ID_ADPCM_G726LE]
                .contains(par.pointee.codec_id)
            if convertAudio && g711 {
                do {
                    let x = try AudioTranscoder(
                        name: name, codec: par.pointee.codec_id, bitsPerSample: par.pointee.bits_per_coded_sample,
                        sampleRate: par.pointee.sample_rate, channels: par.pointee.ch_layout.nb_channels)
                    audioConverter = x
                    audioTimebase = Timebase(st.pointee.time_base.num, st.pointee.time_base.den)
                    audio = Stream(inputIndex: Int32(i), description: x.description)
                    notes.append("\(name) audio at \(par.pointee.sample_rate) Hz recorded as AAC")
                } catch {
                    notes.append("audio not recorded: \(error)")
                }
            } else {
                notes.append("audio not recorded: \(name) audio is not supported")
            }
        }
        keptStreams = [video, audio].compactMap { $0 }
        for (k, s) in keptStreams.enumerated() { map[Int(s.inputIndex)] = Int32(k) }
        bitRate = c.pointee.bit_rate
    }

    /// Reads the next packet of a kept stream into `packet`; returns the kept stream index.
    /// The packet stays valid until the next call.
    public func read() throws -> Int {
        guard let c = ctx else { throw MediaError(.read, "input is closed") }
        while true {
            av_packet_unref(packet)
            interrupter.arm(seconds: timeout)
            let rc = av_read_frame(c, packet)
            if rc < 0 {
                interrupter.disarm()
                if rc == nvr_averror_eof() { throw MediaError(.read, "end of stream", code: rc) }
                if let e = io?.lastError { throw MediaError(.read, "read failed: \(e)", code: rc) }
                if isUDP && (rc == nvr_averror(EIO) || rc == nvr_averror(ETIMEDOUT)) {
                    throw MediaError(
                        .timeout, "the stream went silent (no packets within the input's timeout)", code: rc)
                }
                throw Demuxer.describe(rc, "read failed", interrupter)
            }
            // A read that a stop interrupted can return what it had so far (the MPEG-TS
            // demuxer flushes a half-received frame): never hand that on as a frame.
            if interrupter.isStopped { throw MediaError(.interrupted, "stopped") }
            let p = packet.pointee
            if p.flags & AV_PKT_FLAG_CORRUPT != 0 || p.size < 0 { continue }
            let idx = Int(p.stream_index)
            if idx >= 0, idx < map.count, map[idx] >= 0 { return Int(map[idx]) }
        }
    }

    public func close() {
        if ctx != nil { avformat_close_input(&ctx) }
        io = nil  // custom I/O outlives the format context, never the other way round
    }

    /// Moves to the key frame at or before `time90k` of the video stream (in the stream's own
    /// time, see `videoStartTime90k`).
    public func seekVideo(to time90k: Int64) throws {
        guard let c = ctx, let v = keptStreams.first, let st = c.pointee.streams[Int(v.inputIndex)] else { return }
        let tb = st.pointee.time_base
        guard let ts = Timebase.ticks90k.rescale(time90k, to: Timebase(tb.num, tb.den)) else {
            throw MediaError(.corrupt, "seek to \(time90k) is outside the stream's time base \(tb.num)/\(tb.den)")
        }
        interrupter.arm(seconds: timeout)
        let rc = av_seek_frame(c, v.inputIndex, ts, AVSEEK_FLAG_BACKWARD)
        interrupter.disarm()
        if rc < 0 { throw Demuxer.describe(rc, "seek failed", interrupter) }
    }

    /// The video stream's first timestamp on a 90 kHz clock (0 when unknown).
    public var videoStartTime90k: Int64 {
        guard let c = ctx, let v = keptStreams.first, let st = c.pointee.streams[Int(v.inputIndex)],
            st.pointee.start_time != nvr_av_nopts_value()
        else { return 0 }
        let tb = st.pointee.time_base
        return Timebase(tb.num, tb.den).to90k(st.pointee.start_time) ?? 0
    }

    /// Replaces user:password in a URL with *** for logs and errors.
    public static func redact(_ url: String) -> String {
        // An RTMP URL's last part is the stream key: a password in all but name.
        if url.lowercased().hasPrefix("rtmp"), let slash = url.lastIndex(of: "/"),
            url[url.index(after: slash)...].count > 0, url[..<slash].contains("://"),
            url[..<slash].split(separator: "/").count >= 3
        {
            return String(url[...slash]) + "<stream key>"
        }
        guard let scheme = url.range(of: "://"), let at = url[scheme.upperBound...].firstIndex(of: "@") else {
            return url
        }
        let slash = url[scheme.upperBound...].firstIndex(of: "/") ?? url.endIndex
        guard at < slash else { return url }
        return String(url[..<scheme.upperBound]) + "***@" + String(url[url.index(after: at)...])
    }

    static func describe(_ rc: Int32, _ what: String, _ interrupter: Interrupter) -> MediaError {
        if let why = interrupter.refused { return MediaError(.open, "\(what): \(why)", code: rc) }
        if rc == nvr_averror_exit() || interrupter.isStopped || interrupter.didTimeOut {
            if interrupter.isStopped { return MediaError(.interrupted, "\(what): stopped", code: rc) }
            return MediaError(.timeout, "\(what): no answer (timed out)", code: rc)
        }
        var msg = MediaError.avErrorString(rc)
        if rc == nvr_averror_http_unauthorized() || rc == nvr_averror_http_forbidden() {
            msg = "authorization failed (wrong user or password)"
        } else if rc == nvr_averror(ECONNREFUSED) {
            msg = "connection refused (is the camera's RTSP port right?)"
        } else if rc == nvr_averror_http_not_found() {
            msg = "not found (wrong stream path?)"
        }
        return MediaError(.open, "\(what): \(msg)", code: rc)
    }
}

private func freePacket(_ p: UnsafeMutablePointer<AVPacket>) {
    var q: UnsafeMutablePointer<AVPacket>? = p
    av_packet_free(&q)
}
