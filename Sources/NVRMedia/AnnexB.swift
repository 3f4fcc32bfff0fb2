/// Converts H.264/H.265 Annex B byte streams (start codes) to 4-byte length-prefixed NAL units,
/// the form MP4 samples take. Writes into a caller-owned buffer so the recording path
/// does not allocate per packet.
public enum AnnexB {
    /// True if `data` begins with a 3- or 4-byte start code.
    public static func hasStartCode(_ data: UnsafeRawBufferPointer) -> Bool {
        guard data.count >= 3 else { return false }
        if data[0] == 0 && data[1] == 0 && data[2] == 1 { return true }
        return data.count >= 4 && data[0] == 0 && data[1] == 0 && data[2] == 0 && data[3] == 1
    }

    /// Appends `data` as length-prefixed NAL units; returns the number of bytes appended.
    @discardableResult
    public static func appendLengthPrefixed(_ data: UnsafeRawBufferPointer, to out: inout [UInt8]) -> Int {
        let n = data.count
        let before = out.count
        var i = 0
        var nalStart = -1
        func emit(_ start: Int, _ end: Int) {
            var e = end
            // Trailing zero bytes belong to the next start code.
            while e > start && data[e - 1] == 0 { e -= 1 }
            guard e > start else { return }
            let len = UInt32(e - start)
            out.append(UInt8(truncatingIfNeeded: len >> 24)); out.append(UInt8(truncatingIfNeeded: len >> 16))
            out.append(UInt8(truncatingIfNeeded: len >> 8)); out.append(UInt8(truncatingIfNeeded: len))
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: data[start..<e]))
        }
        while i + 2 < n {
            if data[i] == 0 && data[i + 1] == 0 && data[i + 2] == 1 {
                if nalStart >= 0 { emit(nalStart, i) }
                i += 3
                nalStart = i
            } else {
                i += 1
            }
        }
        if nalStart >= 0 { emit(nalStart, n) } else if n > 0 {
            // No start code at all: treat the whole packet as one NAL unit.
            emit(0, n)
        }
        return out.count - before
    }

    /// Splits Annex B data into NAL unit payloads (without start codes).
    public static func nalUnits(_ bytes: [UInt8]) -> [[UInt8]] {
        var out: [UInt8] = []
        bytes.withUnsafeBytes { _ = appendLengthPrefixed($0, to: &out) }
        var result: [[UInt8]] = []
        var i = 0
        while i + 4 <= out.count {
            let len = Int(out[i]) << 24 | Int(out[i + 1]) << 16 | Int(out[i + 2]) << 8 | Int(out[i + 3])
            i += 4
            guard i + len <= out.count else { break }
            result.append(Array(out[i..<(i + len)]))
            i += len
        }
        return result
    }
}
