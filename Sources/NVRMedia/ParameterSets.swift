/// Finds codec parameter sets (SPS/PPS, and VPS for H.265) inside Annex B frames, for
/// cameras that send them only in-band.
public enum ParameterSets {
    /// The parameter-set NAL units of `frame`, re-joined as Annex B; empty if none.
    /// Called once per key frame: walks the NAL headers in place and copies only the
    /// (small) parameter sets.
    public static func annexB(from frame: UnsafeRawBufferPointer, codec: Codec, lengthPrefixed: Bool = false) -> [UInt8]
    {
        guard lengthPrefixed || AnnexB.hasStartCode(frame) else { return [] }
        var out: [UInt8] = []
        AnnexB.forEachNAL(frame, lengthPrefixed: lengthPrefixed) { nal in
            let isParameterSet: Bool
            switch codec {
            case .h264: isParameterSet = nal[0] & 0x1F == 7 || nal[0] & 0x1F == 8
            case .h265: isParameterSet = (32...34).contains((nal[0] >> 1) & 0x3F)
            case .aac: isParameterSet = false
            }
            if isParameterSet {
                out += [0, 0, 0, 1]
                out.append(contentsOf: nal)
            }
        }
        return out
    }

    /// Picture size from the SPS among Annex B parameter sets.
    public static func pictureSize(annexB: [UInt8], codec: Codec) -> (width: Int32, height: Int32)? {
        SPSParser.size(annexB: annexB, codec: codec).map { (width: $0.0, height: $0.1) }
    }
}
