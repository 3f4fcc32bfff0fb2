import Foundation
import Testing

@testable import NVRMedia

/// The audio formats cameras send besides RFC 3640 AAC: RFC 3016 (MP4A-LATM) AAC taken out as
/// it is, G.711 and G.726 converted to AAC; and what the recorder says when it cannot.
struct CameraAudioTests {
    func latm(_ fmtp: [String: String]) -> Result<LATMDepacketizer, MediaError> {
        LATMDepacketizer.check(
            SDPMedia(
                kind: "audio", payloadType: 97, encoding: "MP4A-LATM", clockRate: 48_000, channels: 1,
                fmtp: fmtp, control: "", frameRate: nil))
    }

    @Test func streamMuxConfigGivesTheAudioSpecificConfig() throws {
        // GStreamer's rtpmp4apay over libavcodec's encoder: the config ends inside
        // latmBufferFullness, and the AudioSpecificConfig says "no SBR" with a sync extension.
        let gst = try latm(["cpresent": "0", "config": "40002310adca00"]).get()
        #expect(gst.config == [0x11, 0x88, 0x56, 0xE5, 0x00])
        #expect(gst.sampleRate == 48_000 && gst.channels == 1)
        // The short form many cameras send: AAC-LC, 44.1 kHz, mono.
        let camera = try latm(["cpresent": "0", "config": "40002410"]).get()
        #expect(camera.config == [0x12, 0x08])
        #expect(camera.sampleRate == 44_100 && camera.channels == 1)
        // Stereo at 16 kHz, cpresent left out (libavformat takes that as 0 too).
        let stereo = try latm(["config": "400028203fc0"]).get()
        #expect(stereo.sampleRate == 16_000 && stereo.channels == 2)
    }

    @Test func latmItCannotReadIsRefusedWithTheReason() {
        func why(_ fmtp: [String: String]) -> String {
            if case .failure(let e) = latm(fmtp) { return e.message }
            return "accepted"
        }
        #expect(why(["cpresent": "1", "config": "40002410"]).contains("cpresent=1"))
        #expect(why(["cpresent": "0"]).contains("without a config"))
        #expect(why(["config": "c0002410"]).contains("audioMuxVersion 1"))
        #expect(why(["config": "40102410"]).contains("programs"))
        #expect(why(["config": "400023"]).contains("cut short"))
        #expect(why(["config": "4001f00000"]).contains("object type 32"))  // 31 is the escape to 32 and up
        #expect(why(["config": "40002400"]).contains("channel configuration 0"))
    }

    @Test func latmPayloadsGiveTheirFramesWhateverTheirCutting() throws {
        let d = try latm(["config": "40002410"]).get()
        var frames: [[UInt8]] = []
        func add(_ bytes: [UInt8], marker: Bool) -> Bool {
            bytes.withUnsafeBytes { p in d.add(p, marker: marker) { frames.append(Array($0)) } }
        }
        // Two elements in one packet, the second longer than 255 bytes (255, 45 = 300).
        let a = [UInt8](repeating: 1, count: 10)
        let b = [UInt8](repeating: 2, count: 300)
        #expect(add([10] + a + [255, 45] + b, marker: true))
        #expect(frames == [a, b])
        // One element across two packets: nothing until the marker.
        frames = []
        let whole: [UInt8] = [255, 45] + b
        #expect(add(Array(whole[..<100]), marker: false))
        #expect(frames.isEmpty)
        #expect(add(Array(whole[100...]), marker: true))
        #expect(frames == [b])
        // A length past the end is refused, and the next packet is read afresh.
        frames = []
        #expect(!add([200, 1, 2, 3], marker: true))
        #expect(add([3, 7, 8, 9], marker: true))
        #expect(frames == [[7, 8, 9]])
        // An element past the size limit is dropped up to its marker: its rest is not read
        // as frames of its own.
        frames = []
        let huge = [UInt8](repeating: 3, count: LATMDepacketizer.maxElement + 1)
        #expect(!add(huge, marker: false))
        #expect(add([2, 9, 9], marker: true))
        #expect(frames.isEmpty)
        #expect(add([1, 6], marker: true))
        #expect(frames == [[6]])
        // A lost packet drops the element it was part of, not the next one.
        frames = []
        d.markBroken()
        #expect(add(Array(whole[100...]), marker: true))
        #expect(add([1, 5], marker: true))
        #expect(frames == [[5]])
    }

    @Test func staticPayloadTypesNeedNoRtpmap() {
        let sdp = SDP.parse(
            "v=0\r\nm=video 0 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\nm=audio 0 RTP/AVP 0\r\na=control:trackID=2\r\nm=audio 0 RTP/AVP 8\r\n"
        )
        #expect(sdp.media.map(\.encoding) == ["H264", "PCMU", "PCMA"])
        #expect(sdp.media[1].clockRate == 8_000 && sdp.media[1].channels == 1)
    }

    @Test func g711BecomesAACAtItsOwnPace() throws {
        // 2 s of a 440 Hz tone as µ-law, 20 ms to a packet, as a camera sends it.
        let pcmu = try #require(AudioTranscoder.decoder(forEncoding: "PCMU"))
        let x = try AudioTranscoder(
            name: "PCMU", codec: pcmu.id, bitsPerSample: pcmu.bitsPerSample,
            sampleRate: 8_000, channels: 1)
        #expect(x.description.codec == .aac && x.description.sampleRate == 8_000 && x.description.extradata.count >= 2)
        var out: [(pts: Int64, duration: Int64, size: Int)] = []
        for packet in 0..<100 {
            let bytes = (0..<160).map { i -> UInt8 in
                let t = Double(packet * 160 + i) / 8_000
                return Self.muLaw(Int16(sin(2 * .pi * 440 * t) * 16_000))
            }
            try bytes.withUnsafeBytes { p in
                try x.add(p, time: Int64(packet * 160)) { pts, duration, frame in
                    out.append((pts, duration, frame.count))
                }
            }
        }
        // 16,000 samples: 15 whole frames in, the encoder one frame behind with its priming.
        #expect(out.count >= 14 && out.count <= 15, "\(out.count) frames")
        #expect(out.first?.pts == -1024)
        #expect(zip(out, out.dropFirst()).allSatisfy { $1.pts - $0.pts == 1024 })
        #expect(out.allSatisfy { $0.duration == 1024 && $0.size > 0 && $0.size < 1024 })
    }

    @Test func gstreamerCamerasSendingLATMAndPCMU() throws {
        let o = try RTSPReplayTests().replay("gstreamer-h264-pcmu")
        #expect(o.client.streams.map(\.codec) == [.h264, .aac])
        #expect(o.client.streams[1].sampleRate == 8_000)
        #expect(o.client.notes == ["PCMU audio at 8000 Hz recorded as AAC"])
        #expect(o.audio >= 2, "\(o.audio) AAC frames")
        let l = try RTSPReplayTests().replay("gstreamer-h264-latm")
        #expect(l.client.streams.map(\.codec) == [.h264, .aac])
        #expect(l.client.streams[1].extradata == [0x11, 0x88, 0x56, 0xE5, 0x00])
        #expect(l.client.notes.isEmpty)
        #expect(l.audio >= 10, "\(l.audio) AAC frames")
    }

    /// G.711 µ-law (ITU-T G.711), for making a camera's packets.
    static func muLaw(_ sample: Int16) -> UInt8 {
        let sign: Int32 = sample < 0 ? 0x80 : 0
        var v = min(Int32(abs(Int32(sample))), 32_635) + 0x84
        var exponent: Int32 = 7
        var mask: Int32 = 0x4000
        while v & mask == 0 && exponent > 0 {
            exponent -= 1
            mask >>= 1
        }
        v = (v >> (exponent + 3)) & 0x0F
        return UInt8(truncatingIfNeeded: ~(sign | exponent << 4 | v))
    }
}
