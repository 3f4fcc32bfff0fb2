// bench/index: the recording path's writes into an index that already holds a year, on
// SQLite or PostgreSQL, through the same `RecordingStore.apply` the index writer calls (see
// bench/index.py, which fills the year and times /timeline over HTTP).
//
//   index-bench --sqlite PATH | --postgresql URL [--batches 300]
//
// Each batch is what a segment rollover of every camera hands the writer at once: per
// camera, the finished segment completed with its frame index (600 frames), the next one
// inserted and its first progress written. Prints one JSON line.
import Foundation
import NVRIndex
import NVRIndexPostgres

func fail(_ s: String) -> Never {
    FileHandle.standardError.write(Data("index-bench: \(s)\n".utf8))
    exit(1)
}

let args = Array(CommandLine.arguments.dropFirst())
func option(_ name: String) -> String? {
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
    return args[i + 1]
}
let batches = Int(option("--batches") ?? "300") ?? 300
let index: any IndexStore
do {
    if let path = option("--sqlite") {
        index = try IndexDatabase(path: path)
    } else if let url = option("--postgresql") {
        index = try PostgresIndex(location: PostgresLocation(url: url))
    } else {
        fail("give --sqlite PATH or --postgresql URL")
    }
} catch { fail("\(error)") }

do {
    let cameras = try index.cameras().compactMap(\.id)
    guard !cameras.isEmpty, let entry = try index.sampleEntryIDs().values.min() else {
        fail("the index has no cameras or sample entry: bench/index.py fills it first")
    }
    // After everything already there, so rows append as a recorder's do.
    var start = try cameras.map { try index.newestSegments(cameraID: $0, limit: 1).first?.end90k ?? 0 }.max() ?? 0
    let minute: Int64 = 60 * 90_000
    let runs = try index.reserveRunIDs(cameras.count)
    // A 600-frame segment's frame index: ~4 bytes a frame, fragments a second.
    let videoIndex = Data((0..<2400).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    let fragmentIndex = Data((0..<240).map { UInt8(truncatingIfNeeded: $0 &* 7) })
    var open: [Int64: (PendingRowID, SegmentRecord)] = [:]
    var seconds: [Double] = []
    var rows = 0
    let began = Date()
    for b in 0..<batches {
        var writes: [RecordingWrite] = []
        for (i, cam) in cameras.enumerated() {
            let run = runs.lowerBound + Int64(i)
            if let (ref, old) = open[cam] {
                var done = old
                done.duration90k = minute
                done.bytes = 30_000_000
                done.frames = 600
                done.keyFrames = 30
                done.state = .complete
                writes.append(
                    .completeSegment(
                        ref, done,
                        SegmentFramesRecord(
                            segmentID: 0, videoIndex: videoIndex, audioIndex: nil, fragmentIndex: fragmentIndex,
                            audioStart90k: nil)))
            }
            let row = SegmentRecord(
                cameraID: cam, runID: run, runSeq: b, start90k: start, path: "bench/\(cam)/\(run)-\(b).mp4",
                videoEntryID: entry, audioEntryID: nil)
            let ref = PendingRowID()
            writes.append(.insertSegment(row, ref))
            writes.append(
                .segmentProgress(ref, start90k: start, duration90k: 90_000, bytes: 500_000, frames: 10, keyFrames: 1))
            open[cam] = (ref, row)
        }
        let t = Date()
        for (ref, id) in try index.apply(writes) { ref.publish(id) }
        seconds.append(Date().timeIntervalSince(t))
        rows += writes.count
        start += minute
    }
    let total = Date().timeIntervalSince(began)
    let sorted = seconds.sorted()
    func ms(_ q: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] * 1000 }
    let segmentsPerSecond = Double(cameras.count * batches) / seconds.reduce(0, +)
    print(
        """
        {"cameras": \(cameras.count), "batches": \(batches), "writes": \(rows), "seconds": \(total), \
        "writesPerSecond": \(Double(rows) / seconds.reduce(0, +)), "segmentsPerSecond": \(segmentsPerSecond), \
        "batchP50ms": \(ms(0.5)), "batchP99ms": \(ms(0.99)), "batchMaxMs": \((sorted.last ?? 0) * 1000)}
        """)
} catch { fail("\(error)") }
