import ArgumentParser
import Foundation
import NVRCore
import NVRIndex

/// `nvr recordings …`: what is stored, for installers and admins.
struct RecordingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recordings", abstract: "List stored recordings.", subcommands: [List.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Runs and segments of a camera between two times.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Camera name.") var camera: String
        @Option(help: "Start (RFC 3339, e.g. 2026-11-22T08:00:00Z, or 90 kHz ticks); default: the beginning.") var start: String?
        @Option(help: "End (RFC 3339 or 90 kHz ticks); default: now.") var end: String?
        @Flag(help: "Print JSON.") var json = false

        struct SegmentRow: Encodable {
            var id: Int64, start: String, start90k: Int64, end: String, end90k: Int64
            var duration90k: Int64, seconds: Double, bytes: Int64, frames: Int, keyFrames: Int
            var state: String, path: String
        }
        struct RunRow: Encodable {
            var run: Int64, start: String, start90k: Int64, end: String, end90k: Int64
            var duration90k: Int64, seconds: Double, bytes: Int64, segments: [SegmentRow]
        }
        struct Output: Encodable { var camera: String; var start: String?; var end: String?; var runs: [RunRow] }

        func run() throws {
            let s = try start.map { try parseTime($0, "--start") } ?? Int64.min
            let e = try end.map { try parseTime($0, "--end") } ?? Int64.max
            guard s < e else { throw ValidationError("--start must be before --end") }
            let (_, _, index) = try global.open()
            guard let cam = try index.camera(named: camera) else { throw CommandFailure("no camera named '\(camera)'") }
            let segs = try index.segments(cameraID: cam.id!, start90k: s, end90k: e)
            var runs: [RunRow] = []
            for seg in segs {
                let row = SegmentRow(id: seg.id!, start: Time90k.rfc3339(seg.start90k), start90k: seg.start90k,
                                     end: Time90k.rfc3339(seg.end90k), end90k: seg.end90k, duration90k: seg.duration90k,
                                     seconds: Double(seg.duration90k) / 90_000, bytes: seg.bytes, frames: seg.frames,
                                     keyFrames: seg.keyFrames, state: seg.state.rawValue, path: seg.path)
                if let last = runs.last, last.run == seg.runID {
                    runs[runs.count - 1].segments.append(row)
                    runs[runs.count - 1].end90k = seg.end90k
                    runs[runs.count - 1].end = row.end
                    runs[runs.count - 1].duration90k += seg.duration90k
                    runs[runs.count - 1].seconds = Double(runs[runs.count - 1].duration90k) / 90_000
                    runs[runs.count - 1].bytes += seg.bytes
                } else {
                    runs.append(RunRow(run: seg.runID, start: row.start, start90k: seg.start90k, end: row.end, end90k: seg.end90k,
                                       duration90k: seg.duration90k, seconds: row.seconds, bytes: seg.bytes, segments: [row]))
                }
            }
            if json {
                try printJSON(Output(camera: camera, start: start.map { _ in Time90k.rfc3339(s) }, end: end.map { _ in Time90k.rfc3339(e) }, runs: runs))
                return
            }
            if runs.isEmpty { print("no recordings of \(camera) in that range"); return }
            for r in runs {
                print("run \(r.run): \(r.start) → \(r.end)  \(Time90k.describeDuration(r.duration90k))  \(formatBytes(r.bytes))  \(r.segments.count) segments")
                printTable(["  START", "END", "DURATION", "SIZE", "FRAMES", "STATE", "FILE"], r.segments.map {
                    ["  " + $0.start, $0.end, Time90k.describeDuration($0.duration90k), formatBytes($0.bytes), String($0.frames), $0.state, $0.path]
                })
            }
            let total = runs.reduce(0) { $0 + $1.duration90k }
            print("total: \(Time90k.describeDuration(total)) in \(runs.count) runs")
        }
    }
}

func parseTime(_ s: String, _ what: String) throws -> Int64 {
    guard let t = Time90k.parse(s) else { throw ValidationError("\(what): '\(s)' is not RFC 3339 (2026-11-22T08:00:00Z) or 90 kHz ticks") }
    return t
}
