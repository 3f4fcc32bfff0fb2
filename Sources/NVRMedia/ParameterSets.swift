/// Finds codec parameter sets (SPS/PPS, and VPS for H.265) inside Annex B frames, for
/// cameras that send them only in-band.
public enum ParameterSets {
    /// The parameter-set NAL units of `frame`, re-joined as Annex B; empty if none.
    public static func annexB(from frame: UnsafeRawBufferPointer, codec: Codec) -> [UInt8] {
        guard AnnexB.hasStartCode(frame) else { return [] }
        var out: [UInt8] = []
        for nal in AnnexB.nalUnits(Array(frame)) where !nal.isEmpty {
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
}
