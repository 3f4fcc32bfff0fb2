/// Audio that arrived ahead of the video, by timestamp, held until the video reaches it: each
/// segment then gets the audio of its own time span, also when a camera's video comes late and
/// in bursts (a stalled encoder, Wi-Fi) while its audio keeps flowing. Without it, the audio of
/// a stall landed in the segment open when it arrived: up to seconds more audio than video in
/// one segment, out of step in playback (RecordingTests saw 3.1 s of audio in a 2-s segment
/// under load; SegmenterTests.audioAheadOfLateVideoGoesToItsOwnSegment scripts it).
///
/// One buffer and one list, sized once: holding a packet copies its bytes and allocates
/// nothing. When they are full the caller writes audio as it comes, as before.
struct AudioHoldback {
    private struct Entry {
        var dts: Int64
        var duration: Int64
        var offset: Int
        var count: Int
    }

    private var bytes: [UInt8]
    private var entries: [Entry] = []
    private var head = 0
    private var used = 0
    private let maxEntries: Int

    /// 256 KiB and 1024 packets: about 20 s of 48 kHz AAC at 96 kbit/s, far beyond a stall a
    /// viewer would sit through.
    init(capacity: Int = 256 * 1024, maxEntries: Int = 1024) {
        bytes = [UInt8](repeating: 0, count: capacity)
        self.maxEntries = maxEntries
        entries.reserveCapacity(maxEntries)
    }

    var isEmpty: Bool { head == entries.count }

    /// Keeps a copy of the packet; false if there is no room (nothing is kept).
    mutating func hold(dts: Int64, duration: Int64, data: UnsafeRawBufferPointer) -> Bool {
        if isEmpty { clear() }
        if used + data.count > bytes.count || entries.count >= maxEntries { compact() }
        guard used + data.count <= bytes.count, entries.count < maxEntries else { return false }
        bytes.withUnsafeMutableBytes { b in
            if let base = b.baseAddress, let src = data.baseAddress, data.count > 0 {
                (base + used).copyMemory(from: src, byteCount: data.count)
            }
        }
        entries.append(Entry(dts: dts, duration: duration, offset: used, count: data.count))
        used += data.count
        return true
    }

    /// Hands over, oldest first, the held packets with a timestamp before `limit` (all: nil).
    mutating func release(
        before limit: Int64?, _ body: (_ dts: Int64, _ duration: Int64, _ data: UnsafeRawBufferPointer) throws -> Void
    ) rethrows {
        while head < entries.count, limit.map({ entries[head].dts < $0 }) ?? true {
            let e = entries[head]
            head += 1
            try bytes.withUnsafeBytes { b in
                try body(e.dts, e.duration, UnsafeRawBufferPointer(rebasing: b[e.offset..<(e.offset + e.count)]))
            }
        }
        if isEmpty { clear() }
    }

    mutating func clear() {
        entries.removeAll(keepingCapacity: true)
        head = 0
        used = 0
    }

    /// Moves what is still held to the front (rare: only when the end is reached while the
    /// front has been released). Overlapping moves are memmove's.
    private mutating func compact() {
        guard head > 0 else { return }
        let start = head < entries.count ? entries[head].offset : used
        let moved = used - start
        bytes.withUnsafeMutableBytes { b in
            if let base = b.baseAddress, moved > 0 { base.copyMemory(from: base + start, byteCount: moved) }
        }
        for i in head..<entries.count {
            entries[i - head] = entries[i]
            entries[i - head].offset -= start
        }
        entries.removeLast(head)
        head = 0
        used = moved
    }
}
