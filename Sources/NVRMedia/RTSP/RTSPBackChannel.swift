import Foundation

/// A camera's audio back-channel (ONVIF Streaming Specification, "Back channel connection"):
/// a DESCRIBE with `Require: www.onvif.org/ver20/backchannel` makes the camera list, besides
/// its own streams, an audio section marked `a=sendonly` that it takes from the client. Only
/// that section is set up (RTP over the RTSP connection, interleaved), played, and sent 20 ms
/// RTP packets of G.711, or one AAC frame a packet (RFC 3640 AAC-hbr). Its own connection:
/// recording is never touched.
public final class RTSPBackChannel: RTSPConversation {
    /// The audio the camera takes.
    public struct Audio: Sendable, Equatable {
        public var encoding: String
        public var payloadType: Int
        public var sampleRate: Int
    }

    public static let require = "www.onvif.org/ver20/backchannel"
    /// Encodings this sends, in the order it prefers them when a camera offers several (G.711
    /// first: no encoder delay, next to no CPU).
    public static let encodings = ["PCMU", "PCMA", "MPEG4-GENERIC"]

    public private(set) var audio = Audio(encoding: "", payloadType: 0, sampleRate: 8000)
    let url: RTSPURL
    let socket: BufferedSocket
    var auth: RTSPAuthenticator?
    var cseq = 0
    private var session: String?
    private var sessionTimeout: Double = 60
    private var lastKeepAlive = Interrupter.now()
    private var channel: UInt8 = 0
    private var sequence = UInt16.random(in: 0...UInt16.max)
    private var timestamp = UInt32.random(in: 0...UInt32.max)
    private let ssrc = UInt32.random(in: 0...UInt32.max)
    private var first = true
    /// Encoded audio not yet a whole packet.
    private var pending: [UInt8] = []
    /// What has been sent, for the talker's status.
    public private(set) var packetsSent = 0

    /// Connects, asks for the back-channel and starts it. A camera that has none, or takes
    /// audio this cannot send, is said in one line (`MediaError.Kind.unsupported`).
    public convenience init(url string: String, timeoutSeconds: Double, interrupter: Interrupter) throws {
        let url = try RTSPURL.opening(string)
        try self.init(url: url) {
            try BufferedSocket(host: url.host, port: url.port, timeout: timeoutSeconds, interrupter: interrupter)
        }
    }

    /// The back-channel over a recorded camera conversation: what the fuzzing target drives.
    package init(replaying bytes: [UInt8], url string: String = "rtsp://camera/stream", chunk: Int = 1500) throws {
        url = try RTSPURL(string)
        socket = BufferedSocket(replaying: bytes, chunk: chunk)
        try setUp()
    }

    private init(url: RTSPURL, connect: () throws -> BufferedSocket) throws {
        self.url = url
        do {
            socket = try connect()
            if let u = url.user { auth = RTSPAuthenticator(user: u, password: url.password ?? "") }
            try setUp()
        } catch let e as MediaError {
            throw MediaError(e.kind, "audio back-channel of \(Demuxer.redact(url.plain)): \(e.message)", code: e.code)
        }
    }

    deinit { close() }

    /// Ends the session (TEARDOWN); the camera stops playing what it was sent.
    public func close() {
        if let session {
            try? socket.write(request("TEARDOWN", url.plain, ["Session": session, "Require": Self.require]))
            self.session = nil
        }
    }

    private func setUp() throws {
        let describe: RTSPResponse
        do {
            describe = try exchange(
                "DESCRIBE", url.plain, ["Accept": "application/sdp", "Require": Self.require])
        } catch let e as MediaError where e.code == 551 {
            throw MediaError(
                .unsupported, "the camera has no audio back-channel (it does not support \(Self.require))", code: 551)
        }
        let base = describe["content-base"] ?? describe["content-location"] ?? url.plain
        let sdp = SDP.parse(describe.body)
        let offered = sdp.media.filter { $0.kind == "audio" && $0.direction == "sendonly" }
        guard !offered.isEmpty else {
            throw MediaError(
                .unsupported,
                "the camera has no audio back-channel (no sendonly audio in its answer to a DESCRIBE with Require: \(Self.require))"
            )
        }
        // What this can feed (mono, 8–48 kHz, a real payload type; AAC as it writes it), then
        // the preferred.
        let usable = offered.filter {
            (8_000...48_000).contains($0.clockRate) && $0.channels == 1 && (0...127).contains($0.payloadType)
                && ($0.encoding != "MPEG4-GENERIC" || Self.takesOurAAC($0))
        }
        guard let m = Self.encodings.lazy.compactMap({ e in usable.first { $0.encoding == e } }).first else {
            let what = offered.map {
                "\($0.encoding.isEmpty ? "unknown" : String($0.encoding.prefix(32)))/\($0.clockRate)"
            }
            throw MediaError(
                .unsupported,
                "the camera's back-channel takes \(what.joined(separator: ", ")) audio; the NVR sends PCMU, PCMA or AAC-LC (AAC-hbr), mono, 8000 to 48000 Hz"
            )
        }
        audio = Audio(encoding: m.encoding, payloadType: m.payloadType, sampleRate: m.clockRate)
        let setup = try exchange(
            "SETUP", url.resolve(m.control, base: base),
            ["Transport": "RTP/AVP/TCP;unicast;interleaved=0-1", "Require": Self.require])
        let (id, timeout) = Self.session(setup["session"])
        guard let id else { throw MediaError(.open, "camera gave no RTSP session") }
        session = id
        if let timeout { sessionTimeout = timeout }
        if let transport = setup["transport"], let range = transport.range(of: "interleaved=") {
            if let c = UInt8(transport[range.upperBound...].prefix { $0.isNumber }) { channel = c }
        }
        let sessionBase = sdp.control.map { url.resolve($0, base: base) } ?? base
        _ = try exchange("PLAY", sessionBase, ["Session": id, "Range": "npt=0.000-", "Require": Self.require])
        lastKeepAlive = Interrupter.now()
    }

    /// An AAC section this can feed: AAC-hbr with 13-bit sizes and 3-bit indexes (what
    /// `send` writes; RFC 3640's default index length is 0, so it must be said), its config
    /// AAC-LC without SBR or PS, mono, at the RTP clock rate, one of AAC's standard rates (what
    /// libavcodec's encoder takes).
    static func takesOurAAC(_ m: SDPMedia) -> Bool {
        guard (m.fmtp["mode"] ?? "").lowercased() == "aac-hbr", m.fmtp["sizelength"] == "13",
            m.fmtp["indexlength"] == "3", m.fmtp["indexdeltalength"] ?? "3" == "3",
            AudioSpecificConfig.sampleRates.contains(m.clockRate)
        else { return false }
        var r = BitReader(SDP.hexBytes(m.fmtp["config"] ?? ""))
        guard let c = try? AudioSpecificConfig.read(&r) else { return false }
        return c.objectType == 2 && !c.sbr && c.channels == 1 && c.sampleRate == m.clockRate
    }

    /// Samples in one G.711 packet: 20 ms, as G.711 is usually sent (RFC 3551).
    var packetSamples: Int { audio.sampleRate / 50 }
    public var isAAC: Bool { audio.encoding == "MPEG4-GENERIC" }
    /// Samples in an AAC frame, and the largest a 13-bit AU size can say.
    static let aacFrameSamples = 1024
    static let maxAACFrame = 8191

    /// Sends encoded audio as TalkEncoder makes it: G.711 bytes (one a sample) in 20 ms packets,
    /// what is short of a packet waiting for the next call; or AAC frames, one a packet.
    public func send(_ units: [[UInt8]]) throws {
        if isAAC {
            for frame in units where !frame.isEmpty {
                guard frame.count <= Self.maxAACFrame else {
                    throw MediaError(.codec, "an AAC frame of \(frame.count) bytes (at most \(Self.maxAACFrame))")
                }
                // RFC 3640: AU-headers-length (16 bits), one AU-header: size (13) and index (3).
                let header: [UInt8] = [0x00, 0x10, UInt8(frame.count >> 5), UInt8((frame.count & 0x1F) << 3)]
                try sendPacket(header[...] + frame[...], samples: Self.aacFrameSamples, marker: true)
            }
        } else {
            for u in units { pending += u }
            var at = 0
            while pending.count - at >= packetSamples {
                try sendPacket(pending[at..<(at + packetSamples)], samples: packetSamples, marker: first)
                at += packetSamples
            }
            pending.removeFirst(at)
        }
        try keepAliveIfDue()
    }

    /// `marker`: G.711, the first packet of a talk spurt (RFC 3551 4.1); AAC, every packet (the
    /// end of an access unit, RFC 3640).
    private func sendPacket(_ payload: ArraySlice<UInt8>, samples: Int, marker: Bool) throws {
        let length = 12 + payload.count
        var p = [UInt8]()
        p.reserveCapacity(4 + length)
        p += [0x24, channel, UInt8(length >> 8), UInt8(length & 0xFF)]
        p += [0x80, UInt8(clamping: audio.payloadType) & 0x7F | (marker ? 0x80 : 0)]
        p += [UInt8(sequence >> 8), UInt8(sequence & 0xFF)]
        for shift in stride(from: 24, through: 0, by: -8) { p.append(UInt8((timestamp >> UInt32(shift)) & 0xFF)) }
        for shift in stride(from: 24, through: 0, by: -8) { p.append(UInt8((ssrc >> UInt32(shift)) & 0xFF)) }
        p += payload
        try socket.write(bytes: p)
        first = false
        sequence &+= 1
        timestamp &+= UInt32(samples)
        packetsSent += 1
    }

    /// OPTIONS every third of the session timeout, its answer read here (the camera's RTCP
    /// reports that came meanwhile are skipped on the way). Any answer will do: a camera that
    /// refuses OPTIONS with Require has still seen the session alive.
    private func keepAliveIfDue() throws {
        guard let session, Interrupter.now() - lastKeepAlive > UInt64(sessionTimeout / 3 * 1e9) else { return }
        lastKeepAlive = Interrupter.now()
        try socket.write(request("OPTIONS", url.plain, ["Session": session, "Require": Self.require]))
        _ = try readResponse()
    }
}
