/// Takes AAC frames out of RFC 3016 (MP4A-LATM) payloads, what GStreamer's `rtpmp4apay` and
/// many IP cameras send. The SDP's `config` is a StreamMuxConfig that holds the
/// AudioSpecificConfig; each payload is one or more AudioMuxElements (a length written as a
/// run of 255s, then the frame), and one element may span packets up to the marker bit. A
/// class: the element being reassembled is kept in a buffer allocated once.
package final class LATMDepacketizer {
    /// The AudioSpecificConfig the MP4 track needs, and what it says.
    package let config: [UInt8]
    package let sampleRate: Int
    package let channels: Int
    private var pending: [UInt8] = []
    /// A packet was lost mid-element: the rest of it is dropped up to the next marker.
    private var broken = false

    /// Largest element reassembled across packets (an AAC frame is at most 6144 bits per channel).
    static let maxElement = 64 * 1024

    private init(config: AudioSpecificConfig) {
        self.config = config.bytes
        sampleRate = config.sampleRate
        channels = config.channels
        pending.reserveCapacity(8 * 1024)
    }

    /// The depacketizer for an SDP audio section, or why its audio cannot be recorded.
    package static func check(_ a: SDPMedia) -> Result<LATMDepacketizer, MediaError> {
        // cpresent=1 puts the configuration in every element; like libavformat, only the
        // out-of-band form (cpresent=0, the form cameras and GStreamer send) is read.
        if let c = a.fmtp["cpresent"], c != "0" {
            return .failure(
                MediaError(.unsupported, "MP4A-LATM with its configuration in every packet (cpresent=\(c.prefix(8)))"))
        }
        guard let hex = a.fmtp["config"], case let bytes = SDP.hexBytes(hex), !bytes.isEmpty else {
            return .failure(MediaError(.unsupported, "MP4A-LATM without a config"))
        }
        do {
            return .success(LATMDepacketizer(config: try streamMuxConfig(bytes)))
        } catch let e as MediaError {
            return .failure(MediaError(.unsupported, "MP4A-LATM config \(hex.prefix(40)): \(e.message)"))
        } catch {
            return .failure(MediaError(.unsupported, "MP4A-LATM config \(hex.prefix(40)): \(error)"))
        }
    }

    /// ISO/IEC 14496-3 1.7.3 StreamMuxConfig, the one shape a single AAC stream takes:
    /// version 0, one program, one layer, all streams on the same time framing, frames whose
    /// lengths are written in each element (frameLengthType 0), no other data.
    static func streamMuxConfig(_ bytes: [UInt8]) throws -> AudioSpecificConfig {
        var r = BitReader(bytes)
        guard r.bits(1) == 0 else { throw MediaError(.unsupported, "audioMuxVersion 1") }
        guard r.bits(1) == 1 else { throw MediaError(.unsupported, "streams on different time framing") }
        r.skip(6)  // numSubFrames: elements are read until their bytes run out, however many there are
        let programs = r.bits(4) + 1
        let layers = r.bits(3) + 1
        guard programs == 1, layers == 1 else {
            throw MediaError(.unsupported, "\(programs) programs of \(layers) layers (only one stream)")
        }
        let asc = try AudioSpecificConfig.read(&r)
        let frameLengthType = r.bits(3)
        guard frameLengthType == 0 else {
            throw MediaError(.unsupported, "frameLengthType \(frameLengthType) (only 0)")
        }
        // Past the AudioSpecificConfig a config may be cut short: GStreamer's ends inside
        // latmBufferFullness. Like libavcodec, missing bits read as zero (no other data).
        r.skip(8)  // latmBufferFullness
        guard r.bits(1) == 0 else { throw MediaError(.unsupported, "other data in the stream") }
        return asc
    }

    package func reset() {
        pending.removeAll(keepingCapacity: true)
        broken = false
    }

    /// A packet was lost: the element being assembled is dropped.
    package func markBroken() {
        pending.removeAll(keepingCapacity: true)
        broken = true
    }

    /// Adds one RTP payload; at the marker bit, calls `frame` with each AAC frame of the
    /// elements gathered. Returns false if they are malformed (they are dropped).
    package func add(_ p: UnsafeRawBufferPointer, marker: Bool, _ frame: (UnsafeRawBufferPointer) throws -> Void)
        rethrows -> Bool
    {
        if broken {
            if marker { broken = false }
            return true
        }
        guard pending.count + p.count <= Self.maxElement else {
            // The rest of this element, up to its marker, must not be read as new frames.
            if marker { reset() } else { markBroken() }
            return false
        }
        pending.append(contentsOf: p)
        guard marker else { return true }
        defer { pending.removeAll(keepingCapacity: true) }
        return try pending.withUnsafeBytes { b in
            var i = 0
            while i < b.count {
                var length = 0
                while true {  // PayloadLengthInfo: bytes summed up to the first that is not 255
                    guard i < b.count else { return false }
                    let x = Int(b[i])
                    i += 1
                    length += x
                    if x != 255 { break }
                }
                guard length > 0, length <= b.count - i else { return false }
                try frame(UnsafeRawBufferPointer(rebasing: b[i..<(i + length)]))
                i += length
            }
            return true
        }
    }
}
