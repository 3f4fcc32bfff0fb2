/// Reassembles RTP payloads into access units, written straight as 4-byte length-prefixed
/// NAL units (the MP4 sample form), so no Annex B pass is needed later. A class: the
/// access-unit buffer is large and must never be copied.
package final class VideoDepacketizer {
    let codec: Codec
    /// The access unit being assembled.
    package var au: [UInt8] = []
    var isKey = false
    /// Offset of the length field of a NAL unit being reassembled from fragments, or -1.
    private var fragmentStart = -1
    /// A fragment was lost: drop the rest of this access unit.
    private(set) var broken = false

    package init(codec: Codec) {
        self.codec = codec
        au.reserveCapacity(512 * 1024)
    }

    package func reset() {
        au.removeAll(keepingCapacity: true)
        isKey = false
        fragmentStart = -1
        broken = false
    }

    /// A packet was lost: whatever arrives until the next access unit is dropped.
    package func markBroken() {
        reset()
        broken = true
    }

    private func appendNAL(_ p: UnsafeRawBufferPointer) {
        guard !p.isEmpty else { return }
        let n = UInt32(p.count)
        au.append(UInt8(truncatingIfNeeded: n >> 24))
        au.append(UInt8(truncatingIfNeeded: n >> 16))
        au.append(UInt8(truncatingIfNeeded: n >> 8))
        au.append(UInt8(truncatingIfNeeded: n))
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

    /// Largest access unit assembled: a frame that never ends (no marker bit, one timestamp
    /// forever, a fragment with no end) is dropped there instead of growing without bound.
    package static let maxAccessUnit = 16 << 20

    /// Adds one RTP payload. Returns false if the payload is malformed (or the access unit
    /// would pass `maxAccessUnit`).
    package func add(_ p: UnsafeRawBufferPointer) -> Bool {
        guard au.count + p.count + 8 <= Self.maxAccessUnit else { return false }
        return codec == .h264 ? addH264(p) : addH265(p)
    }

    private func addH264(_ p: UnsafeRawBufferPointer) -> Bool {
        guard p.count >= 1 else { return false }
        switch p[0] & 0x1F {
        case 1...23:
            appendNAL(p)
            return true
        case 24: return addAggregate(p, headerSize: 1)  // STAP-A
        case 28:  // FU-A: indicator, FU header (S, E, type)
            guard p.count >= 2 else { return false }
            return addFragment(p, fuHeader: p[1], h0: (p[0] & 0xE0) | (p[1] & 0x1F), h1: nil, payloadOffset: 2)
        default: return false
        }
    }

    private func addH265(_ p: UnsafeRawBufferPointer) -> Bool {
        guard p.count >= 2 else { return false }
        switch (p[0] >> 1) & 0x3F {
        case 0...47:
            appendNAL(p)
            return true
        case 48: return addAggregate(p, headerSize: 2)  // aggregation packet
        case 49:  // fragmentation unit: 2-byte payload header, FU header (S, E, type)
            guard p.count >= 3 else { return false }
            return addFragment(p, fuHeader: p[2], h0: (p[0] & 0x81) | ((p[2] & 0x3F) << 1), h1: p[1], payloadOffset: 3)
        default: return false
        }
    }

    /// STAP-A / AP: 16-bit size, NAL unit, repeated.
    private func addAggregate(_ p: UnsafeRawBufferPointer, headerSize: Int) -> Bool {
        var i = headerSize
        while i + 2 <= p.count {
            let n = Int(p[i]) << 8 | Int(p[i + 1])
            i += 2
            guard n > 0, i + n <= p.count else { return false }
            appendNAL(UnsafeRawBufferPointer(rebasing: p[i..<(i + n)]))
            i += n
        }
        return true
    }

    /// FU-A / FU: the first fragment rebuilds the NAL header; the last patches the length.
    private func addFragment(_ p: UnsafeRawBufferPointer, fuHeader: UInt8, h0: UInt8, h1: UInt8?, payloadOffset: Int)
        -> Bool
    {
        if fuHeader & 0x80 != 0 {
            fragmentStart = au.count
            for _ in 0..<4 { au.append(0) }
            au.append(h0)
            if let h1 { au.append(h1) }
            withUnsafeBytes(of: h0) { noteType($0) }
        } else if fragmentStart < 0 {
            broken = true  // the start was lost
            return true
        }
        au.append(contentsOf: UnsafeRawBufferPointer(rebasing: p[payloadOffset...]))
        if fuHeader & 0x40 != 0 { closeFragment() }
        return true
    }

    private func closeFragment() {
        let n = UInt32(au.count - fragmentStart - 4)
        au[fragmentStart] = UInt8(truncatingIfNeeded: n >> 24)
        au[fragmentStart + 1] = UInt8(truncatingIfNeeded: n >> 16)
        au[fragmentStart + 2] = UInt8(truncatingIfNeeded: n >> 8)
        au[fragmentStart + 3] = UInt8(truncatingIfNeeded: n)
        fragmentStart = -1
    }

    /// True if a complete access unit is assembled (no fragment left open).
    package var complete: Bool { !au.isEmpty && fragmentStart < 0 && !broken }
}

/// Splits RFC 3640 (mpeg4-generic, AAC-hbr) payloads into AAC frames.
package struct AACDepacketizer {
    let sizeLength: Int
    let indexLength: Int

    /// The depacketizer for an MPEG4-GENERIC audio section (RTSPClient.audioTrack picks the
    /// reader by encoding), or why its audio cannot be recorded.
    package static func check(_ a: SDPMedia) -> Result<AACDepacketizer, MediaError> {
        guard (a.fmtp["mode"] ?? "").lowercased() == "aac-hbr" else {
            return .failure(
                MediaError(.unsupported, "MPEG4-GENERIC mode '\((a.fmtp["mode"] ?? "").prefix(32))' (only AAC-hbr)"))
        }
        guard let config = a.fmtp["config"], !SDP.hexBytes(config).isEmpty else {
            return .failure(MediaError(.unsupported, "AAC without a config"))
        }
        guard (8_000...96_000).contains(a.clockRate), (1...8).contains(a.channels) else {
            return .failure(MediaError(.unsupported, "AAC at \(a.clockRate) Hz with \(a.channels) channels"))
        }
        // RFC 3640 allows these widths; anything else would misread every header.
        let sizeLength = Int(a.fmtp["sizelength"] ?? "13") ?? -1
        let indexLength = Int(a.fmtp["indexlength"] ?? "3") ?? -1
        guard (1...32).contains(sizeLength), (0...32).contains(indexLength) else {
            return .failure(
                MediaError(
                    .unsupported,
                    "AAC with sizelength \(a.fmtp["sizelength"]?.prefix(20) ?? "") and indexlength \(a.fmtp["indexlength"]?.prefix(20) ?? "")"
                ))
        }
        return .success(AACDepacketizer(sizeLength: sizeLength, indexLength: indexLength))
    }

    /// Calls `frame(offset, size)` for each access unit in the payload; false if malformed.
    package func split(_ p: UnsafeRawBufferPointer, _ frame: (Int, Int) throws -> Void) rethrows -> Bool {
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
