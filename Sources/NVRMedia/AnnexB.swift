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

    /// Calls `body` with each NAL unit of `data` in place (no copies): split at start codes
    /// (trailing zeros belong to the next start code), or read 4-byte length prefixes when
    /// `lengthPrefixed`. Annex B data with no start code at all is one NAL unit.
    /// Runs on every video packet, so it scans with the start-code skip trick (look at every
    /// third byte; a byte > 1 cannot be part of 00 00 01).
    @inline(__always)
    public static func forEachNAL(
        _ data: UnsafeRawBufferPointer, lengthPrefixed: Bool = false,
        _ body: (UnsafeRawBufferPointer) -> Void
    ) {
        let n = data.count
        guard n > 0, let base = data.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        if lengthPrefixed {
            var i = 0
            while i + 4 <= n {
                let len = Int(base[i]) << 24 | Int(base[i + 1]) << 16 | Int(base[i + 2]) << 8 | Int(base[i + 3])
                i += 4
                guard len > 0, i + len <= n else { return }
                body(UnsafeRawBufferPointer(start: base + i, count: len))
                i += len
            }
            return
        }
        func emit(_ start: Int, _ end: Int) {
            var e = end
            while e > start && base[e - 1] == 0 { e -= 1 }
            if e > start { body(UnsafeRawBufferPointer(start: base + start, count: e - start)) }
        }
        var nalStart = -1
        var i = 2
        while i < n {
            let b = base[i]
            if b > 1 {
                i += 3
                continue
            }
            if b == 1 && base[i - 1] == 0 && base[i - 2] == 0 {
                if nalStart >= 0 { emit(nalStart, i - 2) }
                nalStart = i + 1
                i += 3
            } else {
                i += 1
            }
        }
        emit(max(nalStart, 0), n)
    }

    /// Appends `data` as length-prefixed NAL units (the MP4 sample form); returns the number
    /// of bytes appended.
    @discardableResult
    public static func appendLengthPrefixed(_ data: UnsafeRawBufferPointer, to out: inout [UInt8]) -> Int {
        let before = out.count
        forEachNAL(data) { nal in
            let len = UInt32(nal.count)
            out.append(UInt8(truncatingIfNeeded: len >> 24))
            out.append(UInt8(truncatingIfNeeded: len >> 16))
            out.append(UInt8(truncatingIfNeeded: len >> 8))
            out.append(UInt8(truncatingIfNeeded: len))
            out.append(contentsOf: nal)
        }
        return out.count - before
    }

    /// Splits Annex B data into NAL unit payloads (without start codes).
    public static func nalUnits(_ bytes: [UInt8]) -> [[UInt8]] {
        var result: [[UInt8]] = []
        bytes.withUnsafeBytes { forEachNAL($0) { result.append(Array($0)) } }
        return result
    }
}
