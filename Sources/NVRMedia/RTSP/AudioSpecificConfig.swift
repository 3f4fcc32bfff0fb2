/// An MPEG-4 AudioSpecificConfig (ISO/IEC 14496-3 1.6.2.1) read from inside another
/// structure: RFC 3016's StreamMuxConfig carries one bit-aligned with no length, so the only
/// way to find where it ends is to read it. `bytes` is the config on its own, byte-aligned,
/// as an MP4 `esds` wants it.
struct AudioSpecificConfig {
    var objectType: Int
    var sampleRate: Int
    var channels: Int
    var bytes: [UInt8]
    /// SBR (HE-AAC) or PS is signalled, explicitly or by the backward-compatible extension.
    var sbr = false

    static let sampleRates = [
        96_000, 88_200, 64_000, 48_000, 44_100, 32_000, 24_000, 22_050, 16_000, 12_000, 11_025, 8_000, 7_350,
    ]

    /// Reads the config at `r`'s position and leaves `r` just past it; throws what is not
    /// supported (objects other than the AAC family, a program config element).
    static func read(_ r: inout BitReader) throws -> AudioSpecificConfig {
        let start = r.pos
        func objectType() -> Int {
            let t = r.bits(5)
            return t == 31 ? 32 + r.bits(6) : t
        }
        func rate() -> Int? {
            let i = r.bits(4)
            return i == 15 ? r.bits(24) : (i < sampleRates.count ? sampleRates[i] : nil)
        }
        var type = objectType()
        var sbrSignalled = type == 5 || type == 29
        guard let sampleRate = rate() else {
            throw MediaError(.unsupported, "AAC with a reserved sampling frequency index")
        }
        let channelConfig = r.bits(4)
        guard !r.overrun else { throw MediaError(.corrupt, "AAC config is cut short") }
        let explicitSBR = type == 5 || type == 29
        if explicitSBR {  // SBR / PS: an extension rate, then the core's object type
            _ = rate()
            type = objectType()
        }
        // AAC Main, LC and LTP (HE-AAC is LC with SBR): 1024-sample frames, what the recorder
        // times audio by and what players play. Scalable, low-delay, TwinVQ, BSAC are refused.
        guard [1, 2, 4].contains(type) else {
            throw MediaError(.unsupported, "MPEG-4 audio object type \(type) (only AAC Main, LC, LTP, HE-AAC)")
        }
        guard (1...7).contains(channelConfig) else {
            throw MediaError(.unsupported, "AAC with channel configuration \(channelConfig) (1 to 7 only)")
        }
        // GASpecificConfig
        guard r.bits(1) == 0 else { throw MediaError(.unsupported, "AAC with 960-sample frames") }  // frameLengthFlag
        if r.bits(1) == 1 { r.skip(14) }  // dependsOnCoreCoder: coreCoderDelay
        if r.bits(1) == 1 { r.skip(1) }  // extensionFlag: extensionFlag3 (types 1, 2, 4 have nothing else)
        // The backward-compatible extension signalling SBR or PS, or its explicit absence
        // (libavcodec's encoder writes "no SBR" this way). What follows in a StreamMuxConfig
        // (frameLengthType 0, then latmBufferFullness) cannot read as this sync word.
        var ahead = r
        if !explicitSBR, ahead.bits(11) == 0x2B7, !ahead.overrun {
            r = ahead
            guard objectType() == 5 else { throw MediaError(.unsupported, "AAC with an extension other than SBR") }
            if r.bits(1) == 1 {  // sbrPresentFlag
                sbrSignalled = true
                _ = rate()
                var ps = r
                if ps.bits(11) == 0x548, !ps.overrun {
                    r = ps
                    r.skip(1)
                }  // psPresentFlag
            }
        }
        guard !r.overrun else { throw MediaError(.corrupt, "AAC config is cut short") }
        // Copy the bits read into a byte-aligned config of its own.
        var copy = BitReader(r.bytes)
        copy.pos = start
        var out: [UInt8] = []
        var left = r.pos - start
        while left > 0 {
            let n = min(8, left)
            out.append(UInt8(copy.bits(n) << (8 - n)))
            left -= n
        }
        return AudioSpecificConfig(
            objectType: type, sampleRate: sampleRate, channels: channelConfig == 7 ? 8 : channelConfig, bytes: out,
            sbr: sbrSignalled)
    }
}
