/// What an H.264/H.265 sample entry's avcC/hvcC says: the codec, how long the NAL unit length
/// fields of its samples are, and its parameter sets. A range that crosses a change of sample
/// entry (a camera's preview and its card, a new resolution) repeats the new parameter sets in
/// its first key frame, so a player that only reads the first entry still decodes the rest.
public struct DecoderConfiguration: Sendable, Equatable {
    public var codec: Codec
    /// Bytes in each NAL unit length field of the samples (1, 2 or 4).
    public var lengthSize: Int
    /// VPS (H.265), SPS and PPS NAL units, in the order the record lists them.
    public var parameterSets: [[UInt8]]

    /// Reads the configuration record of an `avc1`/`avc3`/`hvc1`/`hev1` sample entry box; nil
    /// for another entry or a record that does not parse.
    public init?(sampleEntry: [UInt8]) {
        guard let (codec, record) = VideoDecoder.decoderConfig(sampleEntry: sampleEntry) else { return nil }
        var sets: [[UInt8]] = []
        var i: Int
        func nal() -> Bool {
            guard i + 2 <= record.count else { return false }
            let n = Int(record[i]) << 8 | Int(record[i + 1])
            i += 2
            guard n > 0, i + n <= record.count else { return false }
            sets.append(Array(record[i..<(i + n)]))
            i += n
            return true
        }
        switch codec {
        case .h264:
            guard record.count >= 7, record[0] == 1 else { return nil }
            lengthSize = Int(record[4] & 3) + 1
            i = 6
            for _ in 0..<Int(record[5] & 0x1F) { guard nal() else { return nil } }
            guard i < record.count else { return nil }
            let pps = Int(record[i])
            i += 1
            for _ in 0..<pps { guard nal() else { return nil } }
        case .h265:
            guard record.count >= 23, record[0] == 1 else { return nil }
            lengthSize = Int(record[21] & 3) + 1
            i = 23
            for _ in 0..<Int(record[22]) {
                guard i + 3 <= record.count else { return nil }
                let count = Int(record[i + 1]) << 8 | Int(record[i + 2])
                i += 3
                for _ in 0..<count { guard nal() else { return nil } }
            }
        case .aac:
            return nil
        }
        // A length field must hold each parameter set's length.
        let size = lengthSize
        guard size != 3, !sets.isEmpty, sets.allSatisfy({ size == 4 || $0.count < 1 << (8 * size) }) else { return nil }
        self.codec = codec
        self.parameterSets = sets
    }

    /// The parameter sets as they would sit at the start of a sample: each after a length
    /// field of `lengthSize` bytes.
    public var inBand: [UInt8] {
        var out: [UInt8] = []
        for s in parameterSets {
            for k in stride(from: lengthSize - 1, through: 0, by: -1) {
                out.append(UInt8(truncatingIfNeeded: s.count >> (8 * k)))
            }
            out += s
        }
        return out
    }
}
