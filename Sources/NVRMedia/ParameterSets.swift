/// Finds codec parameter sets (SPS/PPS, and VPS for H.265) inside Annex B frames, for
/// cameras that send them only in-band.
public enum ParameterSets {
    /// The parameter-set NAL units of `frame`, re-joined as Annex B; empty if none.
    public static func annexB(from frame: UnsafeRawBufferPointer, codec: Codec, lengthPrefixed: Bool = false) -> [UInt8] {
        guard lengthPrefixed || AnnexB.hasStartCode(frame) else { return [] }
        var out: [UInt8] = []
        for nal in (lengthPrefixed ? splitLengthPrefixed(frame) : AnnexB.nalUnits(Array(frame))) where !nal.isEmpty {
            let isParameterSet: Bool
            switch codec {
            case .h264: isParameterSet = [7, 8].contains(nal[0] & 0x1F)
            case .h265: isParameterSet = (32...34).contains((nal[0] >> 1) & 0x3F)
            case .aac: isParameterSet = false
            }
            if isParameterSet { out += [0, 0, 0, 1] + nal }
        }
        return out
    }

    /// Picture size from the SPS among Annex B parameter sets.
    public static func pictureSize(annexB: [UInt8], codec: Codec) -> (width: Int32, height: Int32)? {
        SPSParser.size(annexB: annexB, codec: codec).map { (width: $0.0, height: $0.1) }
    }

    static func splitLengthPrefixed(_ d: UnsafeRawBufferPointer) -> [[UInt8]] {
        var result: [[UInt8]] = []
        var i = 0
        while i + 4 <= d.count {
            let n = Int(d[i]) << 24 | Int(d[i + 1]) << 16 | Int(d[i + 2]) << 8 | Int(d[i + 3])
            i += 4
            guard n > 0, i + n <= d.count else { break }
            result.append(Array(UnsafeRawBufferPointer(rebasing: d[i..<(i + n)])))
            i += n
        }
        return result
    }
}
