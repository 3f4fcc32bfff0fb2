/// Reads picture size from H.264 and H.265 sequence parameter sets (the SDP does not say it).
package enum SPSParser {
    /// Largest picture side taken as real (8K is 7680; H.264 level 6.2 allows 16384).
    package static let maxSide = 16_384

    /// True when the parameter sets include every kind a decoder needs: SPS and PPS (H.264),
    /// VPS, SPS and PPS (H.265).
    package static func isComplete(annexB: [UInt8], codec: Codec) -> Bool {
        let types = Set(
            AnnexB.nalUnits(annexB).compactMap { nal -> Int? in
                guard let h = nal.first else { return nil }
                return codec == .h264 ? Int(h & 0x1F) : Int((h >> 1) & 0x3F)
            })
        return codec == .h264 ? types.isSuperset(of: [7, 8]) : types.isSuperset(of: [32, 33, 34])
    }

    /// Width and height from Annex B parameter sets, or nil if no SPS could be read (or it
    /// describes a picture no camera sends).
    package static func size(annexB: [UInt8], codec: Codec) -> (Int32, Int32)? {
        for nal in AnnexB.nalUnits(annexB) where !nal.isEmpty {
            if codec == .h264, nal[0] & 0x1F == 7 { return h264(Array(nal.dropFirst(1))) }
            if codec == .h265, (nal[0] >> 1) & 0x3F == 33, nal.count > 2 { return h265(Array(nal.dropFirst(2))) }
        }
        return nil
    }

    static func h264(_ rbsp: [UInt8]) -> (Int32, Int32)? {
        var r = BitReader(unescape(rbsp))
        let profile = r.bits(8)
        r.skip(16)  // constraint flags, level
        _ = r.ue()  // sps id
        var chromaFormat = 1
        if [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135].contains(profile) {
            chromaFormat = r.ue()
            if chromaFormat == 3 { r.skip(1) }
            _ = r.ue()
            _ = r.ue()  // bit depths
            r.skip(1)
            if r.bits(1) == 1 {
                for i in 0..<(chromaFormat != 3 ? 8 : 12) where r.bits(1) == 1 {
                    var last = 8
                    var next = 8
                    for _ in 0..<(i < 6 ? 16 : 64) where next != 0 {
                        next = (last + r.se() + 256) % 256
                        if next != 0 { last = next }
                    }
                }
            }
        }
        _ = r.ue()  // log2_max_frame_num
        let pocType = r.ue()
        if pocType == 0 {
            _ = r.ue()
        } else if pocType == 1 {
            r.skip(1)
            _ = r.se()
            _ = r.se()
            let cycle = r.ue()
            guard cycle <= 255 else { return nil }  // the standard's limit; 2^32 would spin for minutes
            for _ in 0..<cycle where !r.overrun { _ = r.se() }
        }
        _ = r.ue()
        r.skip(1)  // max refs, gaps allowed
        let wMbs = r.ue() + 1
        let hMapUnits = r.ue() + 1
        let frameMbsOnly = r.bits(1)
        if frameMbsOnly == 0 { r.skip(1) }
        r.skip(1)
        var w = wMbs * 16
        var h = (2 - frameMbsOnly) * hMapUnits * 16
        if r.bits(1) == 1 {
            let l = r.ue()
            let rr = r.ue()
            let t = r.ue()
            let b = r.ue()
            let cx = chromaFormat == 0 || chromaFormat == 3 ? 1 : 2
            let cy = (chromaFormat == 1 ? 2 : 1) * (2 - frameMbsOnly)
            w -= (l + rr) * cx
            h -= (t + b) * cy
        }
        return plausible(w, h, overrun: r.overrun)
    }

    private static func plausible(_ w: Int, _ h: Int, overrun: Bool) -> (Int32, Int32)? {
        guard !overrun, (1...maxSide).contains(w), (1...maxSide).contains(h) else { return nil }
        return (Int32(w), Int32(h))
    }

    static func h265(_ rbsp: [UInt8]) -> (Int32, Int32)? {
        var r = BitReader(unescape(rbsp))
        r.skip(4)  // vps id
        let maxSubLayersMinus1 = r.bits(3)
        r.skip(1)
        // profile_tier_level(1, maxSubLayersMinus1)
        r.skip(2 + 1 + 5 + 32 + 48 + 8)
        var subProfile = [Bool]()
        var subLevel = [Bool]()
        for _ in 0..<maxSubLayersMinus1 {
            subProfile.append(r.bits(1) == 1)
            subLevel.append(r.bits(1) == 1)
        }
        if maxSubLayersMinus1 > 0 { for _ in maxSubLayersMinus1..<8 { r.skip(2) } }
        for i in 0..<maxSubLayersMinus1 {
            if subProfile[i] { r.skip(88) }
            if subLevel[i] { r.skip(8) }
        }
        _ = r.ue()  // sps id
        let chroma = r.ue()
        if chroma == 3 { r.skip(1) }
        var w = r.ue()
        var h = r.ue()
        if r.bits(1) == 1 {
            let l = r.ue()
            let rr = r.ue()
            let t = r.ue()
            let b = r.ue()
            let cx = chroma == 1 || chroma == 2 ? 2 : 1
            let cy = chroma == 1 ? 2 : 1
            w -= (l + rr) * cx
            h -= (t + b) * cy
        }
        return plausible(w, h, overrun: r.overrun)
    }

    /// Removes emulation-prevention bytes (00 00 03 → 00 00).
    static func unescape(_ b: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(b.count)
        var zeros = 0
        for x in b {
            if zeros >= 2 && x == 3 {
                zeros = 0
                continue
            }
            zeros = x == 0 ? zeros + 1 : 0
            out.append(x)
        }
        return out
    }
}

/// MSB-first bit reader with Exp-Golomb codes; reads past the end yield zeros and set `overrun`.
struct BitReader {
    let bytes: [UInt8]
    var pos = 0
    var overrun = false
    init(_ b: [UInt8]) { bytes = b }

    mutating func bits(_ n: Int) -> Int {
        var v = 0
        for _ in 0..<n {
            let byte = pos >> 3
            let bit: Int
            if byte < bytes.count {
                bit = Int(bytes[byte] >> (7 - UInt8(pos & 7))) & 1
            } else {
                bit = 0
                overrun = true
            }
            v = v << 1 | bit
            pos += 1
        }
        return v
    }
    mutating func skip(_ n: Int) {
        pos += n
        if pos > bytes.count * 8 { overrun = true }
    }
    mutating func ue() -> Int {
        var zeros = 0
        while bits(1) == 0 && zeros < 32 && !overrun { zeros += 1 }
        return (1 << zeros) - 1 + bits(zeros)
    }
    mutating func se() -> Int {
        let k = ue()
        return k & 1 == 1 ? (k + 1) / 2 : -(k / 2)
    }
}
