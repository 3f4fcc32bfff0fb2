import Foundation
import Logging
import NVRIndex
import NVRMedia
import NVRPlayback
import NVRStorage
import NVRTime
import Synchronization

// bench/index-writer: the worst packet-handling delay of N recording cameras while retention
// deletes M segments (issue 18). Run through bench/index-writer (release build); see
// bench/README.md.

struct Packet: Sendable {
    var dts: Int64
    var isKey: Bool
    var data: [UInt8]
}

func arg(_ name: String, _ def: Int) -> Int {
    let a = CommandLine.arguments
    if let i = a.firstIndex(of: name), i + 1 < a.count, let v = Int(a[i + 1]) { return v }
    return def
}
let cameras = arg("--cameras", 16)
let doomed = arg("--segments", 50_000)
let segmentSeconds = arg("--segment-seconds", 4)
let fps = 25

nonisolated func monotonicNanos() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

let work = FileManager.default.temporaryDirectory.appendingPathComponent("nvr-index-bench-\(getpid())").path
try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: work) }

// A real H.264 stream (640x360, 25 fps, a key frame a second), looped by every camera.
let clip = work + "/clip.ts"
let ff = Process()
ff.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
ff.arguments = [
    "-v", "error", "-f", "lavfi", "-i", "testsrc=size=640x360:rate=25", "-t", "4", "-c:v", "libx264", "-g", "25", "-bf",
    "0",
    "-b:v", "1M", clip,
]
try ff.run()
ff.waitUntilExit()
var packets: [Packet] = []
let demuxer = try Demuxer(Demuxer.Options(url: clip), interrupter: Interrupter())
let streams = demuxer.streams
let tb = streams[0]
while true {
    do {
        try demuxer.read { p in
            packets.append(
                Packet(
                    dts: p.dts * 90_000 * Int64(tb.timebaseNum) / Int64(tb.timebaseDen), isKey: p.isKey,
                    data: Array(p.data)))
        }
    } catch { break }
}
let loop90k = Int64(packets.count) * 90_000 / Int64(fps)

var logger = Logger(label: "bench")
logger.logLevel = .warning
let storage = StorageLayout(root: work + "/root")
try storage.prepare()
let index = try IndexDatabase(path: storage.indexPath)

// The footage retention will delete: one camera's old segments, each with its (empty) file.
let now = Time90k.now()
let old = try index.addCamera(CameraRecord(name: "old", plugin: "demo", config: "{}", created90k: 0))
let entry = try index.sampleEntryID(
    SampleEntryRecord(
        codec: "h264", rfc6381: "avc1.64001e", width: 640, height: 360, sampleRate: 0,
        channels: 0, timescale: 90_000, extradata: Data([0]), box: Data([0, 0, 0, 8])))
let oldDir = storage.recordingsDir + "/old"
try FileManager.default.createDirectory(atPath: oldDir, withIntermediateDirectories: true)
try index.pool.write { db in
    for i in 0..<doomed {
        let rel = "recordings/old/s\(i).mp4"
        var s = SegmentRecord(
            cameraID: old.id!, runID: 1, runSeq: i,
            start90k: now - (Int64(doomed) * 60 + 2 * 86_400) * 90_000 + Int64(i) * 60 * 90_000,
            duration90k: 60 * 90_000, path: rel, bytes: 1, frames: 1500, keyFrames: 60, videoEntryID: entry,
            audioEntryID: nil, state: .complete)
        try s.insert(db)
        try SegmentFramesRecord(
            segmentID: s.id!, videoIndex: Data([1, 0]), audioIndex: nil, fragmentIndex: Data([1, 1]),
            audioStart90k: nil
        ).insert(db)
        FileManager.default.createFile(atPath: storage.absolute(rel), contents: nil)
    }
}
try index.setRetention(CameraRetention(cameraID: old.id!, continuousDays: 1))

// Recording cameras: one thread each, packets at their real pace; every append timed.
final class Camera: @unchecked Sendable {
    let name: String
    var delays: [(at: UInt64, nanos: UInt64)] = []
    init(name: String) {
        self.name = name
        delays.reserveCapacity(4096)
    }
}
final class Shared: @unchecked Sendable {
    // Set before the threads start, read only afterwards (except `stop`).
    let packets: [Packet]
    let streams: [StreamDescription]
    let loop90k: Int64
    var segmentSeconds = 4
    let stop = Atomic<Bool>(false)
    init(packets: [Packet], streams: [StreamDescription], loop90k: Int64) {
        self.packets = packets
        self.streams = streams
        self.loop90k = loop90k
    }
}
let shared = Shared(packets: packets, streams: streams, loop90k: loop90k)
shared.segmentSeconds = segmentSeconds

nonisolated func runCamera(_ cam: Camera, _ recorder: RecorderUnderTest, _ shared: Shared, fps: Int) {
    do {
        let packets = shared.packets
        try recorder.begin(streams: shared.streams)
        var n = 0
        // Staggered over a segment, as real cameras are: segment changes come at any moment.
        let begin = monotonicNanos() + UInt64.random(in: 0..<UInt64(shared.segmentSeconds) * 1_000_000_000)
        while !shared.stop.load(ordering: .relaxed) {
            let p = packets[n % packets.count]
            let due = begin + UInt64(n) * 1_000_000_000 / UInt64(fps)
            let nowN = monotonicNanos()
            if due > nowN { usleep(UInt32((due - nowN) / 1000)) }
            let dts = p.dts + Int64(n / packets.count) * shared.loop90k
            let t0 = monotonicNanos()
            try p.data.withUnsafeBytes { try recorder.append(dts: dts, isKey: p.isKey, data: $0) }
            let t1 = monotonicNanos()
            cam.delays.append((t0, t1 - t0))
            n += 1
        }
        try recorder.end()
    } catch {
        print("camera \(cam.name) failed: \(error)")
    }
}
let cams = (0..<cameras).map { Camera(name: "cam\($0)") }
let group = DispatchGroup()
let started = monotonicNanos()
for cam in cams {
    let record = try index.addCamera(CameraRecord(name: cam.name, plugin: "demo", config: "{}", created90k: 0))
    let recorder = RecorderUnderTest(
        camera: record, storage: storage, index: index, segmentSeconds: segmentSeconds, logger: logger)
    group.enter()
    let t = Thread { [fps] in
        runCamera(cam, recorder, shared, fps: fps)
        group.leave()
    }
    t.start()
}

Thread.sleep(forTimeInterval: Double(segmentSeconds) + 4)
let retention = Retention(index: index, storage: storage, logger: logger)
let r0 = monotonicNanos()
let report = try retention.enforce(dryRun: false)
let r1 = monotonicNanos()
Thread.sleep(forTimeInterval: 3)
shared.stop.store(true, ordering: .relaxed)
group.wait()
let flushed = monotonicNanos()
RecorderUnderTest.finish(index: index)
let idle = monotonicNanos() - flushed

func ms(_ n: UInt64) -> String { String(format: "%.2f ms", Double(n) / 1e6) }
let all = cams.flatMap(\.delays)
let during = all.filter { $0.at >= r0 && $0.at <= r1 }.map(\.nanos).sorted()
let outside = all.filter { $0.at < r0 || $0.at > r1 }.map(\.nanos).sorted()
func p(_ a: [UInt64], _ q: Double) -> UInt64 { a.isEmpty ? 0 : a[min(a.count - 1, Int(Double(a.count) * q))] }
let segs = try cams.map { try index.segments(cameraID: try index.camera(named: $0.name)!.id!).count }.reduce(0, +)
print(
    """
    cameras \(cameras), retention deleted \(report.segments) segments in \(ms(r1 - r0)); \(all.count) packets, \(segs) segments recorded
    during retention: \(during.count) packets, worst \(ms(during.last ?? 0)), p99 \(ms(p(during, 0.99)))
    outside retention: \(outside.count) packets, worst \(ms(outside.last ?? 0)), p99 \(ms(p(outside, 0.99)))
    \(RecorderUnderTest.describe()) (final flush \(ms(idle)), run \(ms(monotonicNanos() - started)))
    """)
