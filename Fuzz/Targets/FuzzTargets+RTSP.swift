import Foundation
import NVRMedia

extension FuzzTargets {
    /// A whole camera conversation as the native RTSP client reads it: DESCRIBE/SETUP/PLAY
    /// answers, then interleaved RTP/RTCP and stray answers. The first byte picks how the
    /// bytes are cut into reads (1…256 bytes per recv).
    static let rtspSession: Target = { data in
        guard let first = data.first else { return }
        let chunk = Int(first) + 1
        let rest = Array(data.dropFirst())
        guard let client = try? RTSPClient(replaying: rest, chunk: chunk) else { return }
        defer { client.close() }
        for s in client.streams {
            precondition(s.width >= 0 && s.width <= SPSParser.maxSide && s.height >= 0 && s.height <= SPSParser.maxSide)
            precondition(s.timebaseDen > 0 && s.timebaseNum > 0)
        }
        var packets = 0
        while packets < 100_000 {
            do {
                try client.read { p in
                    precondition(p.stream >= 0 && p.stream < client.streams.count)
                    precondition(p.data.count <= VideoDepacketizer.maxAccessUnit)
                    packets += 1
                }
            } catch {
                return
            }
            packets += 1  // reads that complete nothing count too: the input is finite
        }
    }

    /// A camera's answers to the audio back-channel's DESCRIBE (with Require), SETUP and PLAY,
    /// then whatever it sends while the back-channel talks (RTCP, stray answers to its
    /// keep-alive). The first byte picks how the bytes are cut into reads.
    static let rtspBackChannel: Target = { data in
        guard let first = data.first else { return }
        let rest = Array(data.dropFirst())
        guard let channel = try? RTSPBackChannel(replaying: rest, chunk: Int(first) + 1) else { return }
        defer { channel.close() }
        precondition(RTSPBackChannel.encodings.contains(channel.audio.encoding))
        precondition((8_000...48_000).contains(channel.audio.sampleRate))
        precondition((0...127).contains(channel.audio.payloadType))
        if channel.isAAC {
            // Frames one a packet; one too large for a 13-bit size is refused, not cut.
            try? channel.send([[UInt8](repeating: 0x21, count: 300)])
            precondition(channel.packetsSent == 1)
            try? channel.send([[UInt8](repeating: 0, count: 9000)])
            precondition(channel.packetsSent == 1)
        } else {
            // A second of audio in 20 ms packets: every packet whole, none left behind but a part.
            try? channel.send([[UInt8](repeating: 0xFF, count: channel.audio.sampleRate + 7)])
            precondition(channel.packetsSent == 50)
        }
    }

    /// An SDP description: parsed, and every media section judged the way the client does.
    static let sdp: Target = { data in
        let parsed = SDP.parse(text(Array(data)))
        for m in parsed.media {
            _ = AACDepacketizer.check(m)
            let ps = SDP.parameterSets([
                m.fmtp["sprop-parameter-sets"], m.fmtp["sprop-vps"], m.fmtp["sprop-sps"], m.fmtp["sprop-pps"],
            ])
            for codec in [Codec.h264, .h265] {
                if let size = SPSParser.size(annexB: ps, codec: codec) { precondition(size.0 > 0 && size.1 > 0) }
                _ = SPSParser.isComplete(annexB: ps, codec: codec)
            }
            _ = SDP.hexBytes(m.fmtp["config"] ?? "")
            if let f = m.frameRate { precondition(f.isFinite && f > 0 && f <= 1000) }
        }
    }

    /// Parameter sets and key frames: the first byte picks the codec and the framing.
    static let sps: Target = { data in
        guard let first = data.first else { return }
        let codec: Codec = first & 1 == 0 ? .h264 : .h265
        let body = UnsafeRawBufferPointer(rebasing: data.dropFirst())
        let annexB = ParameterSets.annexB(from: body, codec: codec, lengthPrefixed: first & 2 != 0)
        for ps in [annexB, Array(body)] {
            if let size = SPSParser.size(annexB: ps, codec: codec) {
                precondition(
                    size.0 >= 1 && size.0 <= Int32(SPSParser.maxSide) && size.1 >= 1
                        && size.1 <= Int32(SPSParser.maxSide))
            }
            _ = ParameterSets.pictureSize(annexB: ps, codec: codec)
        }
        var out: [UInt8] = []
        AnnexB.appendLengthPrefixed(body, to: &out)
        _ = AnnexB.nalUnits(Array(body))
    }

    /// RTP payloads (separated by "\n--\n") through the H.264, H.265 and AAC depacketizers;
    /// the first piece sets the AAC header widths.
    static let rtpDepacketizer: Target = { data in
        let parts = pieces(data, max: 512)
        let h264 = VideoDepacketizer(codec: .h264)
        let h265 = VideoDepacketizer(codec: .h265)
        var media = SDPMedia(
            kind: "audio", payloadType: 97, encoding: "MPEG4-GENERIC", clockRate: 48_000, channels: 1,
            fmtp: ["mode": "AAC-hbr", "config": "1188"], control: "", frameRate: nil)
        if let head = parts.first, head.count >= 2 {
            media.fmtp["sizelength"] = String(Int(Int8(bitPattern: head[0])))
            media.fmtp["indexlength"] = String(Int(Int8(bitPattern: head[1])))
        }
        let aac = try? AACDepacketizer.check(media).get()
        for (i, p) in parts.enumerated() {
            p.withUnsafeBytes { raw in
                for v in [h264, h265] {
                    if !v.add(raw) { v.reset() }
                    precondition(v.au.count <= VideoDepacketizer.maxAccessUnit)
                    if i % 7 == 6 {
                        _ = v.complete
                        v.reset()
                    }
                }
                _ = aac?.split(raw) { off, size in precondition(off >= 0 && size > 0 && off + size <= raw.count) }
            }
        }
    }

    /// Authentication challenges and URLs as cameras and plugins give them.
    static let rtspAuth: Target = { data in
        let parts = pieces(data)
        let urlText = text(parts[0])
        if let url = try? RTSPURL(urlText) { precondition(url.port > 0) }
        var auth = RTSPAuthenticator(user: "user", password: "pass")
        for p in parts.dropFirst() {
            if auth.challenge(text(p)) { _ = auth.header(method: "DESCRIBE", uri: "rtsp://camera/stream") }
        }
    }
}
