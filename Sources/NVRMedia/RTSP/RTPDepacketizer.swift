/// Reassembles RTP payloads into access units, written straight as 4-byte length-prefixed
/// NAL units (the MP4 sample form), so no Annex B pass is needed later. A class: the
/// access-unit buffer is large and must never be copied.
final class VideoDepacketizer {
    let codec: Codec
    /// The access unit being assembled.
    var au: [UInt8] = []
    var isKey = false
    /// Offset of the length field of a NAL unit being reassembled from fragments, or -1.
    private var fragmentStart = -1
    /// A fragment was lost: drop the rest of this access unit.
    private(set) var broken = false

    init(codec: Codec) {
        self.codec = codec
        au.reserveCapacity(512 * 1024)
    }

    func reset() { au.removeAll(keepingCapacity: true); isKey = false; fragmentStart = -1; broken = false }

    /// A packet was lost: whatever arrives until the next access unit is dropped.
    func markBroken() { reset(); broken = true }

    private func appendNAL(_ p: UnsafeRawBufferPointer) {
        guard !p.isEmpty else { return }
        let n = UInt32(p.count)
        au.append(UInt8(truncatingIfNeeded: n >> 24)); au.append(UInt8(truncatingIfNeeded: n >> 16))
        au.append(UInt8(truncatingIfNeeded: n >> 8)); au.append(UInt8(truncatingIfNeeded: n))
        au.append(contentsOf: p)
        noteType(p)
    }

    private func noteType(_ header: UnsafeRawBufferPointer) {
        switch codec {
        case .h264: if header[0] & 0x1F == 5 { isKey = true }
        case .h265: if (16...21).contains((header[0] >> 1) & 0x3F) { isKey = true }
        case .aac: break
        }
    }

    /// Adds one RTP payload. Returns false if the payload is malformed.
    func add(_ p: UnsafeRawBufferPointer) -> Bool {
        codec == .h264 ? addH264(p) : addH265(p)
    }

    private func addH264(_ p: UnsafeRawBufferPointer) -> Bool {
        guard p.count >= 1 else { return false }
        let type = p[0] & 0x1F
        switch type {
        case 1...23:
            appendNAL(p)
        case 24: // STAP-A
            var i = 1
            while i + 2 <= p.count {
                let n = Int(p[i]) << 8 | Int(p[i + 1])
                i += 2
                guard n > 0, i + n <= p.count else { return false }
                appendNAL(UnsafeRawBufferPointer(rebasing: p[i..<(i + n)]))
                i += n
            }
        case 28: // FU-A
            guard p.count >= 2 else { return false }
            let start = p[1] & 0x80 != 0, end = p[1] & 0x40 != 0
            let header = (p[0] & 0xE0) | (p[1] & 0x1F)
            if start {
                fragmentStart = au.count
                au += [0, 0, 0, 0, header]
                withUnsafeBytes(of: header) { noteType($0) }
            } else if fragmentStart < 0 {
                broken = true
                return true
            }
            au.append(contentsOf: UnsafeRawBufferPointer(rebasing: p[2...]))
            if end { closeFragment() }
        default:
            return false
        }
        return true
    }

    private func addH265(_ p: UnsafeRawBufferPointer) -> Bool {
        guard p.count >= 2 else { return false }
        let type = (p[0] >> 1) & 0x3F
        switch type {
        case 0...47:
            appendNAL(p)
        case 48: // aggregation packet
            var i = 2
            while i + 2 <= p.count {
                let n = Int(p[i]) << 8 | Int(p[i + 1])
                i += 2
                guard n > 0, i + n <= p.count else { return false }
                appendNAL(UnsafeRawBufferPointer(rebasing: p[i..<(i + n)]))
                i += n
            }
        case 49: // fragmentation unit
            guard p.count >= 3 else { return false }
            let start = p[2] & 0x80 != 0, end = p[2] & 0x40 != 0
            let fuType = p[2] & 0x3F
            if start {
                fragmentStart = au.count
                let h0 = (p[0] & 0x81) | (fuType << 1)
                au += [0, 0, 0, 0, h0, p[1]]
                withUnsafeBytes(of: h0) { noteType($0) }
            } else if fragmentStart < 0 {
                broken = true
                return true
            }
            au.append(contentsOf: UnsafeRawBufferPointer(rebasing: p[3...]))
            if end { closeFragment() }
        default:
            return false
        }
        return true
    }

    private func closeFragment() {
        let n = UInt32(au.count - fragmentStart - 4)
        au[fragmentStart] = UInt8(truncatingIfNeeded: n >> 24); au[fragmentStart + 1] = UInt8(truncatingIfNeeded: n >> 16)
        au[fragmentStart + 2] = UInt8(truncatingIfNeeded: n >> 8); au[fragmentStart + 3] = UInt8(truncatingIfNeeded: n)
        fragmentStart = -1
    }

    /// True if a complete access unit is assembled (no fragment left open).
    var complete: Bool { !au.isEmpty && fragmentStart < 0 && !broken }
}

/// Splits RFC 3640 (mpeg4-generic, AAC-hbr) payloads into AAC frames.
struct AACDepacketizer {
    let sizeLength: Int
    let indexLength: Int

    /// Calls `frame(offset, size)` for each access unit in the payload; false if malformed.
    func split(_ p: UnsafeRawBufferPointer, _ frame: (Int, Int) throws -> Void) rethrows -> Bool {
        guard p.count >= 2 else { return false }
        let headerBits = Int(p[0]) << 8 | Int(p[1])
        let headerBytes = (headerBits + 7) / 8
        let perHeader = sizeLength + indexLength
        guard perHeader > 0, 2 + headerBytes <= p.count else { return false }
        var offset = 2 + headerBytes
        var bit = 16
        for _ in 0..<(headerBits / perHeader) {
            var size = 0
            for _ in 0..<sizeLength {
                size = size << 1 | Int(p[bit >> 3] >> (7 - UInt8(bit & 7))) & 1
                bit += 1
            }
            bit += indexLength
            guard size > 0, offset + size <= p.count else { return false }
            try frame(offset, size)
            offset += size
        }
        return true
    }
}
