import CFFmpeg
import CNVRPlugin
import Foundation
import PluginSupport

/// A synthetic camera: draws a moving test pattern with the time burned in, encodes it to
/// H.264 with libavcodec in-process, and pushes the packets to the host in real time.
final class DemoCamera: @unchecked Sendable {
    // @unchecked Sendable: `running` is guarded by `lock`; the encoder is used only by the push thread.
    static let options: Set<String> = [
        "width", "height", "fps", "bitrate", "gop_seconds", "event_every", "event_seconds", "event_type", "event_phase",
        "jump_after",
    ]
    let width: Int, height: Int, fps: Int, bitRate: Int, gopSeconds: Int
    /// A timer that reports events, as a camera's own motion or doorbell would: one every
    /// `eventEvery` seconds (0 = never), lasting `eventSeconds`, reported as start + stop
    /// ("span") or as one instantaneous "pulse" whose quiet period is `eventSeconds`.
    let eventEvery: Int, eventSeconds: Int, eventType: String, eventPulse: Bool
    /// A broken camera's clock, for trying the recorder's honesty: after `jumpAfter` seconds
    /// (0 = never), every other frame's timestamps are 2^31 ticks on, as if the top bit of a
    /// 32-bit RTP clock flipped each frame.
    let jumpAfter: Int
    private let host: PluginHostCallbacks
    private let lock = NSCondition()
    private var running = false
    private var finished = true

    init(configJSON: String, host: PluginHostCallbacks) throws {
        let c = try PluginConfig(json: configJSON, allowed: Self.options)
        width = try c.int("width", in: 64...3840) ?? 640
        height = try c.int("height", in: 64...2160) ?? 360
        fps = try c.int("fps", in: 1...60) ?? 10
        bitRate = try c.int("bitrate", in: 50_000...50_000_000) ?? 500_000
        gopSeconds = try c.int("gop_seconds", in: 1...10) ?? 2
        guard width % 2 == 0, height % 2 == 0 else { throw PluginConfigError("width and height must be even") }
        eventEvery = try c.int("event_every", in: 0...86_400) ?? 0
        eventSeconds = try c.int("event_seconds", in: 1...3600) ?? 5
        eventType = try c.string("event_type") ?? "motion"
        let phase = try c.string("event_phase") ?? "span"
        guard ["span", "pulse"].contains(phase) else {
            throw PluginConfigError("option 'event_phase' must be span or pulse")
        }
        eventPulse = phase == "pulse"
        jumpAfter = try c.int("jump_after", in: 0...86_400) ?? 0
        guard eventEvery == 0 || eventSeconds < eventEvery else {
            throw PluginConfigError("event_seconds must be shorter than event_every")
        }
        self.host = host
    }

    deinit { stop() }

    func start() throws {
        let encoder = try Encoder(width: width, height: height, fps: fps, bitRate: bitRate, gop: fps * gopSeconds)
        lock.lock()
        running = true
        finished = false
        lock.unlock()
        let t = Thread { [self] in
            pushLoop(encoder)
            lock.lock()
            finished = true
            lock.broadcast()
            lock.unlock()
        }
        t.name = "demo camera"
        t.start()
    }

    /// Stops the push thread and waits until its last push_packet has returned.
    func stop() {
        lock.lock()
        running = false
        while !finished { lock.wait() }
        lock.unlock()
    }

    /// The event timer: the k-th event starts at k × eventEvery seconds after streaming began.
    private func reportEvents(frame n: Int) {
        guard eventEvery > 0 else { return }
        let every = eventEvery * fps
        let length = eventSeconds * fps
        let phase = n % every
        let time90k = Int64((Date().timeIntervalSince1970 * 90_000).rounded())
        if n >= every && phase == 0 {
            host.event(
                jsonText(
                    eventPulse
                        ? [
                            "type": eventType, "phase": "pulse", "time90k": time90k, "quiet_seconds": eventSeconds,
                            "score": 1.0,
                        ]
                        : ["type": eventType, "phase": "start", "time90k": time90k, "score": 1.0]))
        } else if !eventPulse && n >= every && phase == length {
            host.event(jsonText(["type": eventType, "phase": "stop", "time90k": time90k]))
        }
    }

    private var isRunning: Bool {
        lock.lock()
        defer { lock.unlock() }
        return running
    }

    private func pushLoop(_ encoder: Encoder) {
        host.state(NVR_STATE_CONNECTING)
        let extradata = encoder.extradata
        let ok = extradata.withUnsafeBufferPointer { e -> Bool in
            var params = nvr_stream_params(
                struct_size: UInt32(MemoryLayout<nvr_stream_params>.size), codec: UInt32(NVR_CODEC_H264.rawValue),
                width: Int32(width), height: Int32(height), sample_rate: 0, channels: 0,
                timebase_num: 1, timebase_den: 90_000, extradata: e.baseAddress, extradata_size: e.count)
            return host.table.begin_streams?(host.table.host_ctx, &params, 1) == 0
        }
        guard ok else {
            host.state(NVR_STATE_LOST_UNEXPECTED, "host refused the stream")
            return
        }
        host.state(NVR_STATE_STREAMING)
        let pattern = TestPattern(width: width, height: height)
        let start = DispatchTime.now().uptimeNanoseconds
        let frameNanos = UInt64(1_000_000_000 / fps)
        let clock = DateFormatter()
        clock.dateFormat = "HH:mm:ss"
        var n = 0
        while isRunning {
            let due = start + UInt64(n) * frameNanos
            let now = DispatchTime.now().uptimeNanoseconds
            if due > now { usleep(UInt32((due - now) / 1000)) }
            let pts90k = Int64(n) * 90_000 / Int64(fps)
            let text = clock.string(from: Date())
            let rc = encoder.encode(
                pts: Int64(n),
                draw: { y, ys, u, v, uvs in
                    pattern.draw(frame: n, fps: fps, clock: text, y: y, yStride: ys, u: u, v: v, uvStride: uvs)
                },
                emit: { pkt in
                    let p = pkt.pointee
                    let jump: Int64 = jumpAfter > 0 && p.pts >= Int64(jumpAfter * fps) && p.pts % 2 == 1 ? 1 << 31 : 0
                    var out = nvr_packet(
                        struct_size: UInt32(MemoryLayout<nvr_packet>.size), stream_index: 0,
                        pts: p.pts * 90_000 / Int64(fps) + jump, dts: p.dts * 90_000 / Int64(fps) + jump,
                        duration: Int64(90_000 / fps), key: p.flags & AV_PKT_FLAG_KEY != 0 ? 1 : 0,
                        data: p.data, size: Int(p.size))
                    return host.table.push_packet?(host.table.host_ctx, &out) ?? 1
                })
            _ = pts90k
            reportEvents(frame: n)
            if rc != 0 {
                host.state(NVR_STATE_LOST_UNEXPECTED, rc < 0 ? "encoder failed" : "host asked to stop")
                return
            }
            n += 1
        }
        host.state(NVR_STATE_LOST_EXPECTED, "stopped")
    }
}
