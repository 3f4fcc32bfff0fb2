import Foundation
import NVRIndex
import NVRMedia
import NVRPluginHost
import NVRRecorder
import NVRTime
import Synchronization
import TestSupport
import Testing

/// A camera in memory, for a session run in-process: each connection the session opens gets
/// the next entry of the script — packets delivered as fast as the session reads them, then a
/// hang-up, or a refusal — and the time the session sees is the packets' own (simulated: a
/// connection `gap` seconds after the last one starts that much later).
final class ScriptedCamera: LiveInputOpener, @unchecked Sendable {
    // @unchecked Sendable: `script`, `opened` and `base` are guarded by `lock`; `clock` is atomic.
    struct Packet {
        var dts: Int64  // 90 kHz
        var isKey: Bool
        var data: [UInt8]
    }
    enum Connection {
        case stream([Packet], hangUp: String)
        case refuse(String)
    }

    let streams: [StreamDescription]
    private let lock = NSLock()
    private var script: [(connection: Connection, gapSeconds: Int64)]
    private var opened = 0
    private var base: Int64
    /// The simulated wall clock, 90 kHz.
    final class Clock: Sendable {
        private let t: Atomic<Int64>
        init(_ start: Int64) { t = Atomic(start) }
        var now: Int64 { t.load(ordering: .relaxed) }
        func set(_ v: Int64) { t.store(v, ordering: .relaxed) }
    }
    let clock: Clock

    init(streams: [StreamDescription], start90k: Int64, script: [(Connection, gapSeconds: Int64)]) {
        self.streams = streams
        self.script = script.map { ($0.0, $0.gapSeconds) }
        base = start90k
        clock = Clock(start90k)
    }

    var connectionsOpened: Int { lock.withLock { opened } }

    func open(_ source: LiveSource, interrupter: Interrupter) throws -> any LiveInput {
        let (next, start) = lock.withLock { () -> (Connection?, Int64) in
            opened += 1
            guard !script.isEmpty else { return (nil, base) }
            let (c, gap) = script.removeFirst()
            base = max(base, clock.now) + gap * 90_000
            clock.set(base)
            return (c, base)
        }
        switch next {
        case nil: throw MediaError(.open, "the scripted camera is off")
        case .refuse(let why): throw MediaError(.open, why)
        case .stream(let packets, let why):
            return Input(streams: streams, packets: packets, hangUp: why, start90k: start, clock: clock)
        }
    }

    /// One connection: its packets, each read advancing the clock to its time.
    final class Input: LiveInput {
        let streams: [StreamDescription]
        let frameRate = 25.0
        let bitRate: Int64 = 0
        private let packets: [Packet]
        private let hangUp: String
        private let start90k: Int64
        private let clock: Clock
        private var next = 0

        init(streams: [StreamDescription], packets: [Packet], hangUp: String, start90k: Int64, clock: Clock) {
            self.streams = streams
            self.packets = packets
            self.hangUp = hangUp
            self.start90k = start90k
            self.clock = clock
        }

        func read(_ handler: (InputPacket) throws -> Void) throws {
            guard next < packets.count else { throw MediaError(.read, hangUp) }
            let p = packets[next]
            next += 1
            clock.set(start90k + p.dts - packets[0].dts)
            try p.data.withUnsafeBytes { bytes in
                try handler(InputPacket(stream: 0, pts: p.dts, dts: p.dts, duration: 0, isKey: p.isKey, data: bytes))
            }
        }

        func close() {}
    }
}

/// A camera session driven by a scripted camera, in-process: connect, record, a hang-up, a
/// refused reconnect, backoff, a second run — as Moonfire tests its streamer.
@Suite struct CameraSessionTests {
    /// 3 s of H.264 (25 fps, a key frame a second) as packets in 90 kHz ticks.
    static func clip(in dir: String) throws -> (streams: [StreamDescription], packets: [ScriptedCamera.Packet]) {
        let path = dir + "/scripted.ts"
        let r = try runProcess(
            "/usr/bin/ffmpeg",
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-t", "3",
                "-c:v", "libx264", "-g", "25", "-bf", "0", path,
            ])
        try #require(r.status == 0, "\(r.stderr)")
        let d = try Demuxer(Demuxer.Options(url: path), interrupter: Interrupter())
        defer { d.close() }
        let tb = Timebase(d.streams[0].timebaseNum, d.streams[0].timebaseDen)
        var packets: [ScriptedCamera.Packet] = []
        while true {
            do {
                try d.read { p in
                    guard p.stream == 0, let t = tb.to90k(p.dts) else { return }
                    packets.append(.init(dts: t, isKey: p.isKey, data: Array(p.data)))
                }
            } catch is MediaError { break }
        }
        // The session's stream description says 90 kHz (the packets are handed over in it).
        var video = d.streams[0]
        video.timebaseNum = 1
        video.timebaseDen = 90_000
        return ([video], packets)
    }

    @Test func aSessionRecordsReconnectsAfterAHangUpAndARefusalAndStops() throws {
        let h = try RecorderHarness(segmentSeconds: 2)
        let (streams, packets) = try Self.clip(in: h.root)
        try #require(packets.count == 75)
        try h.add("scripted", ["url": "rtsp://127.0.0.1:1/never-opened"])
        let camera = try h.camera("scripted")
        let start: Int64 = 1_800_000_000 * 90_000
        let cam = ScriptedCamera(
            streams: streams, start90k: start,
            script: [
                (.stream(packets, hangUp: "the camera hung up"), gapSeconds: 0),
                (.refuse("connection refused"), gapSeconds: 10),
                (.stream(packets, hangUp: "the camera hung up again"), gapSeconds: 20),
            ])
        let session = CameraSession(
            camera: camera, plugins: h.recorder.plugins, writer: h.recorder.writer, storage: h.recorder.storage,
            settings: .init(segmentSeconds: 2), logger: TestEnvironment.logger, opener: cam,
            clock: { cam.clock.now })
        session.minBackoff = 0.02
        session.maxBackoff = 0.1
        session.start()
        // The script runs out, then the camera is "off": the session keeps retrying.
        let done = TestEnvironment.wait(timeout: 20) { cam.connectionsOpened >= 5 }
        session.stop()
        #expect(done, "the session opened \(cam.connectionsOpened) connections")
        #expect(session.connections == 2, "two connections streamed")
        #expect(session.status.state == .stopped)

        // Two runs, each the whole clip, at the simulated times the camera sent them.
        let segs = try h.completeSegments("scripted")
        let runs = Dictionary(grouping: segs, by: \.runID).values.map { $0.sorted { $0.start90k < $1.start90k } }
            .sorted { $0[0].start90k < $1[0].start90k }
        try #require(runs.count == 2, "\(segs.map { ($0.runID, $0.start90k) })")
        let frame: Int64 = 90_000 / 25
        let last = packets[packets.count - 1].dts - packets[0].dts  // the clip's last frame, 2.96 s in
        for (run, begins) in zip(runs, [start, start + last + (10 + 20) * 90_000]) {
            #expect(
                abs(run[0].start90k - begins) <= frame, "run starts at \(Double(run[0].start90k - start) / 90_000) s")
            #expect(run.reduce(0) { $0 + $1.frames } == packets.count, "every frame recorded")
            #expect(abs(run.reduce(0) { $0 + $1.duration90k } - 3 * 90_000) <= frame)
        }
        for s in segs { #expect(FileManager.default.fileExists(atPath: h.path(s))) }
    }
}
