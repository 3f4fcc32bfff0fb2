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
    /// Runs on every video packet, so it scans with the start-code skip trick (look at every
    /// third byte; a byte > 1 cannot be part of 00 00 01) and copies NAL units with memcpy.
    @discardableResult
    public static func appendLengthPrefixed(_ data: UnsafeRawBufferPointer, to out: inout [UInt8]) -> Int {
        let n = data.count
        guard n > 0, let base = data.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return 0 }
        let before = out.count
        var nalStart = -1
        var i = 2
        while i < n {
            let b = base[i]
            if b > 1 { i += 3; continue }
            if b == 1 && base[i - 1] == 0 && base[i - 2] == 0 {
                if nalStart >= 0 { emit(base, nalStart, i - 2, &out) }
                nalStart = i + 1
                i += 3
            } else {
                i += 1
            }
        }
        if nalStart >= 0 { emit(base, nalStart, n, &out) } else {
            // No start code at all: treat the whole packet as one NAL unit.
            emit(base, 0, n, &out)
        }
        return out.count - before
    }

    /// Appends base[start..<end] with a 4-byte length, dropping trailing zeros (they belong
    /// to the next start code, e.g. the first byte of 00 00 00 01).
    @inline(__always)
    private static func emit(_ base: UnsafePointer<UInt8>, _ start: Int, _ end: Int, _ out: inout [UInt8]) {
        var e = end
        while e > start && base[e - 1] == 0 { e -= 1 }
        guard e > start else { return }
        let len = UInt32(e - start)
        out.append(UInt8(truncatingIfNeeded: len >> 24)); out.append(UInt8(truncatingIfNeeded: len >> 16))
        out.append(UInt8(truncatingIfNeeded: len >> 8)); out.append(UInt8(truncatingIfNeeded: len))
        out.append(contentsOf: UnsafeBufferPointer(start: base + start, count: e - start))
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
