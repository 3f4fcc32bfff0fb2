import Foundation

extension RTSPClient {
    // MARK: Reading

    public func pace(seconds: Double, when: @escaping () -> Bool) {
        socket.pacing = seconds > 0 && seconds < 1 ? (UInt64(seconds * 1e9), when) : nil
    }

    public func read(_ handler: (InputPacket) throws -> Void) throws {
        keepAliveIfDue()
        try socket.require(1)
        guard socket.peek(0) == 0x24 else {
            _ = try readResponse()  // keep-alive answers, server notices
            return
        }
        try socket.require(4)
        let channel = socket.peek(1)
        let length = Int(socket.peek(2)) << 8 | Int(socket.peek(3))
        try socket.require(4 + length)
        defer { socket.consume(4 + length) }
        // RTCP and others.
        guard let t = tracks.firstIndex(where: { $0.channel == channel }), length >= 12 else { return }
        try socket.withBytes(offset: 4, count: length) { try handleRTP($0, track: t, handler) }
    }

    func handleRTP(_ p: UnsafeRawBufferPointer, track t: Int, _ handler: (InputPacket) throws -> Void) throws {
        guard p[0] >> 6 == 2 else { return }
        let padding = p[0] & 0x20 != 0
        let ext = p[0] & 0x10 != 0
        let csrc = Int(p[0] & 0x0F)
        let marker = p[1] & 0x80 != 0
        let seq = UInt16(p[2]) << 8 | UInt16(p[3])
        let ts = UInt32(p[4]) << 24 | UInt32(p[5]) << 16 | UInt32(p[6]) << 8 | UInt32(p[7])
        var start = 12 + 4 * csrc
        if ext {
            guard start + 4 <= p.count else { return }
            start += 4 + 4 * (Int(p[start + 2]) << 8 | Int(p[start + 3]))
        }
        var end = p.count
        if padding, end > 0 { end -= Int(p[end - 1]) }
        guard start < end else { return }
        let payload = UnsafeRawBufferPointer(rebasing: p[start..<end])

        let (time, lost) = clocks[t].advance(ts: ts, seq: seq, rtpInfoTime: tracks[t].rtpInfoTime)
        if let v = tracks[t].video {
            if lost { v.markBroken() }
            // A new timestamp ends the previous access unit if its last packet lacked the marker.
            if !v.au.isEmpty && time != clocks[t].pendingTS {
                try emit(v, track: t, time: clocks[t].pendingTS, handler)
            }
            clocks[t].pendingTS = time
            if !v.add(payload) { v.reset() }
            if marker { try emit(v, track: t, time: time, handler) }
        } else if let aac = tracks[t].aac {
            var k: Int64 = 0
            _ = try aac.split(payload) { off, size in
                try handler(
                    InputPacket(
                        stream: t, pts: time + k * 1024, dts: time + k * 1024, duration: 1024, isKey: true,
                        data: UnsafeRawBufferPointer(rebasing: payload[off..<(off + size)])))
                k += 1
            }
        } else if let latm = tracks[t].latm {
            if lost { latm.markBroken() }
            // Each frame is 1024 samples; the RTP clock need not be the sample rate.
            let step = Int64(1024 * tracks[t].media.clockRate / max(latm.sampleRate, 1))
            var k: Int64 = 0
            _ = try latm.add(payload, marker: marker) { frame in
                try handler(
                    InputPacket(
                        stream: t, pts: time + k * step, dts: time + k * step, duration: step, isKey: true, data: frame)
                )
                k += 1
            }
        } else if let x = tracks[t].transcoder {
            try x.add(payload, time: time) { pts, duration, frame in
                try handler(InputPacket(stream: t, pts: pts, dts: pts, duration: duration, isKey: true, data: frame))
            }
        }
    }

    func emit(_ v: VideoDepacketizer, track t: Int, time: Int64, _ handler: (InputPacket) throws -> Void) throws {
        defer { v.reset() }
        guard v.complete else { return }
        try v.au.withUnsafeBytes { au in
            try handler(InputPacket(stream: t, pts: time, dts: time, duration: 0, isKey: v.isKey, data: au))
        }
    }

    /// Sessions expire without requests; OPTIONS every third of the timeout keeps them alive.
    func keepAliveIfDue() {
        let now = Interrupter.now()
        guard let session, now &- lastKeepAlive > UInt64(sessionTimeout / 3 * 1e9) else { return }
        lastKeepAlive = now
        try? socket.write(request("OPTIONS", url.plain, ["Session": session]))
    }
}
