/// The last few seconds of a camera's packets, held in memory while nothing is being
/// recorded, so an event recording can begin before the event (pre-roll).
///
/// Whole GOPs are kept: footage must start at a key frame. The oldest GOP is dropped once the
/// one after it alone reaches back `keep90k`. Bytes live in a few reused arrays (no allocation
/// per packet once warm), and a byte cap bounds memory for cameras with very long GOPs.
final class PreRollBuffer {
    struct Packet {
        var stream: Int
        var pts: Int64
        var dts: Int64
        var duration: Int64
        var isKey: Bool
        /// Capture time on the wall clock (90 kHz), as the gate computed it.
        var capture90k: Int64
        var offset: Int
        var size: Int
    }

    final class GOP {
        var bytes: [UInt8] = []
        var packets: [Packet] = []
        var start90k: Int64 = 0
        func reset() {
            bytes.removeAll(keepingCapacity: true)
            packets.removeAll(keepingCapacity: true)
        }
    }

    private(set) var gops: [GOP] = []
    private var spare: [GOP] = []
    private let maxBytes: Int
    private var bytes = 0

    init(maxBytes: Int = 64 << 20) { self.maxBytes = maxBytes }

    var isEmpty: Bool { gops.isEmpty }
    var byteCount: Int { bytes }

    /// Adds a packet captured at `capture90k`; packets before the first key frame are dropped.
    func append(
        stream: Int, pts: Int64, dts: Int64, duration: Int64, isKey: Bool, data: UnsafeRawBufferPointer,
        capture90k: Int64
    ) {
        if stream == 0 && isKey {
            let g = spare.popLast() ?? GOP()
            g.reset()
            g.start90k = capture90k
            gops.append(g)
        }
        guard let g = gops.last else { return }
        // One GOP alone over the cap (a camera that sent one key frame, then P-frames only):
        // drop it and wait for the next key frame rather than grow without bound.
        if gops.count == 1 && bytes + data.count > maxBytes {
            clear()
            return
        }
        g.packets.append(
            Packet(
                stream: stream, pts: pts, dts: dts, duration: duration, isKey: isKey, capture90k: capture90k,
                offset: g.bytes.count, size: data.count))
        g.bytes.append(contentsOf: data)
        bytes += data.count
    }

    /// Drops the oldest GOPs while the next one still starts at or before `t`, or while the
    /// buffer is over its byte cap (keeping the newest GOP).
    func trim(keepingFrom t: Int64) {
        while gops.count > 1 && (gops[1].start90k <= t || bytes > maxBytes) { dropOldest() }
    }

    /// Hands every packet from the GOP that starts at or before `t` (or the oldest) to `body`
    /// in order, then empties the buffer.
    func drain(from t: Int64, _ body: (Packet, UnsafeRawBufferPointer) throws -> Void) rethrows {
        trim(keepingFrom: t)
        defer { clear() }
        for g in gops {
            try g.bytes.withUnsafeBytes { raw in
                for p in g.packets { try body(p, UnsafeRawBufferPointer(rebasing: raw[p.offset..<p.offset + p.size])) }
            }
        }
    }

    /// Hands the packets of one stream in the newest GOP to `body`, in order (the live view
    /// that starts being watched between events); the buffer is unchanged.
    func forEachInNewestGOP(stream: Int, _ body: (Packet, UnsafeRawBufferPointer) -> Void) {
        guard let g = gops.last else { return }
        g.bytes.withUnsafeBytes { raw in
            for p in g.packets where p.stream == stream {
                body(p, UnsafeRawBufferPointer(rebasing: raw[p.offset..<p.offset + p.size]))
            }
        }
    }

    func clear() { while !gops.isEmpty { dropOldest() } }

    private func dropOldest() {
        let g = gops.removeFirst()
        bytes -= g.bytes.count
        g.reset()
        if spare.count < 4 { spare.append(g) }
    }
}
