import Foundation
import Logging
import NVRCore
import NVRIndex
import NVRMedia
import NVRTime

// bench/record-replay, for the code before the live view (7848b8e, the last commit before
// it): the same harness with that commit's API (NVRCore; the segmenter writes SQLite itself;
// no live hub). bench/record-callgrind builds it in a worktree of that commit.
//
// bench/record-replay: one camera's recording path with no network and no other process in
// the way, for `valgrind --tool=callgrind` (bench/record-callgrind). A captured RTSP
// conversation (bench/fuzz/capture_rtsp.py: DESCRIBE/SETUP/PLAY answers, then interleaved RTP)
// is read by the native client from memory, `--chunk` bytes per read, and every packet goes
// through the recording gate as a camera session hands it over: segmenter (files, and its own
// SQLite writes at that commit), event tracker. Default settings: continuous, motion
// off. Only `replayPackets` is meant to be counted (callgrind's --toggle-collect); it prints
// how many packets and video frames it handled, to divide by.

func option(_ name: String, _ def: Int) -> Int {
    let a = CommandLine.arguments
    if let i = a.firstIndex(of: name), i + 1 < a.count, let v = Int(a[i + 1]) { return v }
    return def
}
let positional = CommandLine.arguments.dropFirst().filter { !$0.hasPrefix("--") && Int($0) == nil }
guard positional.count == 2, let capturePath = positional.first, let work = positional.last else {
    FileHandle.standardError.write(Data("usage: record-replay-bench CAPTURE WORKDIR [--chunk 16384]\n".utf8))
    exit(2)
}
let chunk = option("--chunk", 16384)
var capture = [UInt8](try Data(contentsOf: URL(fileURLWithPath: capturePath)))
if capture.first == 0xFF { capture.removeFirst() }  // capture_rtsp.py's read-size byte (the fuzz seed's)

var logger = Logger(label: "bench")
logger.logLevel = .warning
let storage = StorageLayout(root: work + "/root")
try storage.prepare()
let index = try IndexDatabase(path: storage.indexPath)
let camera = try index.addCamera(CameraRecord(name: "cam", plugin: "rtsp", config: "{}", created90k: Time90k.now()))
let settings = RecordingSettings()
let segmenter = Segmenter(
    camera: camera, storage: storage, index: index, settings: .init(segmentSeconds: 60), logger: logger)
let events = EventTracker(
    camera: camera, index: index, logger: logger, preRoll90k: settings.preRoll90k, postRoll90k: settings.postRoll90k)
let gate = RecordingGate(
    camera: camera, index: index, segmenter: segmenter, tracker: events, settings: settings, logger: logger)

let client = try RTSPClient(replaying: capture, chunk: chunk)
try gate.begin(streams: client.streams)

/// The counted part: every packet of the capture, read and recorded, then the segment closed.
@inline(never) func replayPackets(_ client: RTSPClient, _ gate: RecordingGate) -> (packets: Int, frames: Int) {
    var packets = 0
    var frames = 0
    reading: while true {
        do {
            try client.read { p in
                packets += 1
                if p.stream == 0 { frames += 1 }
                try gate.append(
                    stream: p.stream, pts: p.pts, dts: p.dts, duration: p.duration, isKey: p.isKey, data: p.data)
            }
        } catch {
            break reading
        }
    }
    // The segment is closed (its row completed) as when a camera stops.
    do { try gate.end() } catch { FileHandle.standardError.write(Data("closing: \(error)\n".utf8)) }
    return (packets, frames)
}

let (packets, frames) = replayPackets(client, gate)
print(
    "packets \(packets) frames \(frames) bytes \(capture.count) streams \(client.streams.map(\.summary).joined(separator: ", "))"
)
