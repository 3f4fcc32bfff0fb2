import Foundation

/// A native RTSP client for the common case — rtsp:// over TCP (interleaved), H.264/H.265
/// video, AAC audio (RFC 3640 or RFC 3016) and G.711/G.726 audio converted to AAC — that reads the socket in large chunks and depacketizes
/// RTP straight into MP4 samples. It exists for CPU: libavformat's RTSP reader costs about
/// three small reads per RTP packet. Other inputs (rtsps, UDP, other protocols) use Demuxer.
public final class RTSPClient: LiveInput, RTSPConversation {
    public private(set) var streams: [StreamDescription] = []
    public private(set) var frameRate: Double = 0
    public var bitRate: Int64 { 0 }

    let url: RTSPURL
    let socket: BufferedSocket
    var auth: RTSPAuthenticator?
    var cseq = 0
    var session: String?
    var sessionTimeout: Double = 60
    var lastKeepAlive = Interrupter.now()

    struct Track {
        var media: SDPMedia
        var channel: UInt8
        var codec: Codec
        var video: VideoDepacketizer?
        var aac: AACDepacketizer?
        var latm: LATMDepacketizer?
        var transcoder: AudioTranscoder?
        /// The track's RTP time at the play start (RTP-Info), for cross-stream alignment.
        var rtpInfoTime: UInt32?
    }
    var tracks: [Track] = []

    /// Per-track RTP clock, updated on every packet (kept apart from `Track` so the hot path
    /// mutates a few integers in place instead of copying the track's SDP description).
    struct RTPClock {
        var started = false
        var lastTS: UInt32 = 0
        var extTS: Int64 = 0
        /// Start of the shared timeline in this track's clock.
        var origin: Int64 = 0
        var expectedSeq: UInt16?
        /// Time of the access unit being assembled (video).
        var pendingTS: Int64 = 0

        /// Unwraps `ts` to 64 bits; returns the time on the shared timeline and whether packets were lost.
        mutating func advance(ts: UInt32, seq: UInt16, rtpInfoTime: UInt32?) -> (time: Int64, lost: Bool) {
            if started {
                extTS += Int64(Int32(bitPattern: ts &- lastTS))
            } else {
                started = true
                extTS = Int64(ts)
                origin = rtpInfoTime.map(Int64.init) ?? Int64(ts)
            }
            lastTS = ts
            let lost = expectedSeq.map { $0 != seq } ?? false
            expectedSeq = seq &+ 1
            return (extTS - origin, lost)
        }
    }
    var clocks: [RTPClock] = []

    /// Connects, authenticates, and starts playing. Errors say what is wrong in one line.
    public convenience init(url string: String, timeoutSeconds: Double, interrupter: Interrupter) throws {
        let url = try RTSPURL.opening(string)
        try self.init(url: url, timeoutSeconds: timeoutSeconds) {
            try BufferedSocket(host: url.host, port: url.port, timeout: timeoutSeconds, interrupter: interrupter)
        }
    }

    /// The client over a recorded camera conversation (`bytes` are everything the camera
    /// sends, answers and interleaved RTP): what the fuzzing targets and parser tests drive.
    package init(replaying bytes: [UInt8], url string: String = "rtsp://camera/stream", chunk: Int = 1500) throws {
        url = try RTSPURL(string)
        socket = BufferedSocket(replaying: bytes, chunk: chunk)
        try setUp()
    }

    private init(url: RTSPURL, timeoutSeconds: Double, connect: () throws -> BufferedSocket) throws {
        let redacted = Demuxer.redact(url.plain)
        self.url = url
        do {
            socket = try connect()
            if let u = url.user { auth = RTSPAuthenticator(user: u, password: url.password ?? "") }
            try setUp()
        } catch let e as MediaError {
            throw MediaError(e.kind, "cannot open \(redacted): \(e.message)", code: e.code)
        }
    }

    /// What the recorder gives up on and why, for streams it cannot record (said in the
    /// camera's status and by `camera probe`, never dropped silently).
    public private(set) var notes: [String] = []

    deinit { close() }

    public func close() {
        if let session {
            try? socket.write(request("TEARDOWN", url.plain, ["Session": session]))
            self.session = nil
        }
    }

    // MARK: Session setup

    private func setUp() throws {
        let describe = try exchange("DESCRIBE", url.plain, ["Accept": "application/sdp"])
        let base = describe["content-base"] ?? describe["content-location"] ?? url.plain
        let sdp = SDP.parse(describe.body)
        let sessionBase = sdp.control.map { url.resolve($0, base: base) } ?? base
        // The first H.264/H.265 video and the first AAC audio.
        if var v = sdp.media.first(where: { $0.kind == "video" && ($0.encoding == "H264" || $0.encoding == "H265") }) {
            let codec: Codec = v.encoding == "H264" ? .h264 : .h265
            // RFC 6184/7798: the clock of H.264 and H.265 over RTP is 90 kHz. A camera that
            // announces another (0, 2^32) would make every timestamp wrong.
            if v.clockRate != 90_000 {
                notes.append("video clock rate \(v.clockRate) Hz in the SDP ignored (H.264/H.265 over RTP use 90 kHz)")
                v.clockRate = 90_000
            }
            tracks.append(Track(media: v, channel: 0, codec: codec, video: VideoDepacketizer(codec: codec)))
            frameRate = v.frameRate ?? 0
        } else {
            let found = sdp.media.map { "\($0.kind) \($0.encoding)" }.joined(separator: ", ")
            throw MediaError(
                .unsupported, "no H.264 or H.265 video stream (camera offers: \(found.isEmpty ? "nothing" : found))")
        }
        // The first audio section the recorder can store; if none, why the first cannot be.
        var audioRefusal: MediaError?
        for a in sdp.media where a.kind == "audio" {
            switch Self.audioTrack(a) {
            case .success(let t):
                tracks.append(t)
                if let x = t.transcoder {
                    notes.append("\(a.encoding) audio at \(x.description.sampleRate) Hz recorded as AAC")
                }
                audioRefusal = nil
            case .failure(let why):
                audioRefusal = audioRefusal ?? why
                continue
            }
            break
        }
        if let audioRefusal { notes.append("audio not recorded: \(audioRefusal.message)") }
        for (i, t) in tracks.enumerated() {
            var headers = ["Transport": "RTP/AVP/TCP;unicast;interleaved=\(t.channel)-\(t.channel + 1)"]
            if let session { headers["Session"] = session }
            let r = try exchange("SETUP", url.resolve(t.media.control, base: base), headers)
            if session == nil {
                let (id, timeout) = Self.session(r["session"])
                session = id
                if let timeout { sessionTimeout = timeout }
            }
            if let transport = r["transport"], let range = transport.range(of: "interleaved=") {
                let ch = transport[range.upperBound...].prefix { $0.isNumber }
                if let c = UInt8(ch) { tracks[i].channel = c }
            }
        }
        guard let session else { throw MediaError(.open, "camera gave no RTSP session") }
        let play = try exchange("PLAY", sessionBase, ["Session": session, "Range": "npt=0.000-"])
        parseRTPInfo(play["rtp-info"], base: base)
        streams = tracks.map { streamDescription($0) }
        clocks = Array(repeating: RTPClock(), count: tracks.count)
    }

    /// How an SDP audio section is read: AAC as it comes, G.711/G.726 through AAC.
    private static func audioTrack(_ a: SDPMedia) -> Result<Track, MediaError> {
        switch a.encoding {
        case "MPEG4-GENERIC":
            return AACDepacketizer.check(a).map { Track(media: a, channel: 2, codec: .aac, aac: $0) }
        case "MP4A-LATM":
            guard (8_000...96_000).contains(a.clockRate) else {
                return .failure(MediaError(.unsupported, "MP4A-LATM with an RTP clock of \(a.clockRate) Hz"))
            }
            return LATMDepacketizer.check(a).map { Track(media: a, channel: 2, codec: .aac, latm: $0) }
        default:
            guard let d = AudioTranscoder.decoder(forEncoding: a.encoding) else {
                return .failure(
                    MediaError(
                        .unsupported, "\(a.encoding.isEmpty ? "unknown" : a.encoding.prefix(32)) audio is not supported"
                    ))
            }
            do {
                let x = try AudioTranscoder(
                    name: a.encoding, codec: d.id, bitsPerSample: d.bitsPerSample,
                    sampleRate: Int32(clamping: a.clockRate), channels: Int32(clamping: a.channels))
                return .success(Track(media: a, channel: 2, codec: .aac, transcoder: x))
            } catch let e as MediaError {
                return .failure(e)
            } catch {
                return .failure(MediaError(.codec, "\(error)"))
            }
        }
    }

    private func streamDescription(_ t: Track) -> StreamDescription {
        if let x = t.transcoder { return x.description }  // RTP's clock for these is the sample rate (RFC 3551)
        if let l = t.latm {
            return StreamDescription(
                codec: .aac, sampleRate: Int32(l.sampleRate), channels: Int32(l.channels),
                timebaseNum: 1, timebaseDen: Int32(t.media.clockRate), extradata: l.config)
        }
        switch t.codec {
        case .h264, .h265:
            var ps =
                t.codec == .h264
                ? SDP.parameterSets([t.media.fmtp["sprop-parameter-sets"]])
                : SDP.parameterSets([t.media.fmtp["sprop-vps"], t.media.fmtp["sprop-sps"], t.media.fmtp["sprop-pps"]])
            var size = (Int32(0), Int32(0))
            if !ps.isEmpty {
                // Parameter sets in the SDP that do not describe a picture (or lack one of the
                // sets) are dropped: the ones sent in-band with the first key frame are used.
                if let s = SPSParser.size(annexB: ps, codec: t.codec), SPSParser.isComplete(annexB: ps, codec: t.codec)
                {
                    size = s
                } else {
                    notes.append("parameter sets in the SDP are unusable; using those in the stream")
                    ps = []
                }
            }
            var d = StreamDescription(
                codec: t.codec, width: size.0, height: size.1, timebaseNum: 1,
                timebaseDen: Int32(t.media.clockRate), extradata: ps)
            d.packetFormat = .lengthPrefixed
            return d
        case .aac:
            // Checked by AACDepacketizer.check: rate and channels in range, a config present.
            return StreamDescription(
                codec: .aac, sampleRate: Int32(t.media.clockRate), channels: Int32(t.media.channels),
                timebaseNum: 1, timebaseDen: Int32(t.media.clockRate),
                extradata: SDP.hexBytes(t.media.fmtp["config"] ?? ""))
        }
    }

    /// RTP-Info gives each track's RTP time at the play start: the cross-stream alignment.
    private func parseRTPInfo(_ header: String?, base: String) {
        guard let header else { return }
        for entry in header.split(separator: ",") {
            var u: String?
            var rtptime: UInt32?
            for field in entry.split(separator: ";") {
                let kv = field.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard kv.count == 2 else { continue }
                if kv[0] == "url" { u = kv[1] } else if kv[0] == "rtptime" { rtptime = UInt32(kv[1]) }
            }
            guard let u, let rtptime else { continue }
            for i in tracks.indices
            where u == url.resolve(tracks[i].media.control, base: base) || u.hasSuffix("/" + tracks[i].media.control) {
                tracks[i].rtpInfoTime = rtptime
            }
        }
    }
}
