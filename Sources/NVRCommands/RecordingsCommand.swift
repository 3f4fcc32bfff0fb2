import ArgumentParser
import Foundation
import NVRAccess
import NVRIndex
import NVRPlayback
import NVRStorage
import NVRTime

/// `nvr recordings …`: what is stored, for installers and admins.
struct RecordingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recordings", abstract: "Find, list and delete stored recordings.",
        subcommands: [Days.self, List.self, Delete.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Runs and segments of a camera between two times.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Camera name.") var camera: String
        @Option(help: "Start (RFC 3339, e.g. 2026-11-22T08:00:00Z, or 90 kHz ticks); default: the beginning.")
        var start: String?
        @Option(help: "End (RFC 3339 or 90 kHz ticks); default: now.") var end: String?
        @Option(help: "A local day, YYYY-MM-DD (instead of --start/--end).") var date: String?
        @Option(help: "IANA time zone for --date and for local times (default: the server's).") var tz: String?
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            if date != nil && (start != nil || end != nil) {
                throw ValidationError("give --date or --start/--end, not both")
            }
        }

        struct SegmentRow: Encodable {
            var id: Int64, start: String, start90k: Int64, end: String, end90k: Int64
            var duration90k: Int64, seconds: Double, bytes: Int64, frames: Int, keyFrames: Int
            var state: String, path: String
        }
        struct RunRow: Encodable {
            var run: Int64, start: String, start90k: Int64, end: String, end90k: Int64
            var duration90k: Int64, seconds: Double, bytes: Int64, segments: [SegmentRow]
        }
        struct SliceRow: Encodable {
            var start: String, start90k: Int64, end: String, end90k: Int64, seconds: Double, segments: Int, bytes: Int64
        }
        struct Output: Encodable {
            var camera: String
            var start: String?
            var end: String?
            var slices: [SliceRow]
            var runs: [RunRow]
        }

        func run() throws {
            let days = try LocalDays(tz: tz)
            var s = try start.map { try parseTime($0, "--start") } ?? Int64.min
            var e = try end.map { try parseTime($0, "--end") } ?? Int64.max
            if let date {
                let r = try days.day(date)
                s = r.lowerBound
                e = r.upperBound
            }
            guard s < e else { throw ValidationError("--start must be before --end") }
            let (_, _, index) = try global.open()
            guard let cam = try index.camera(named: camera) else { throw CommandFailure("no camera named '\(camera)'") }
            let segs = try index.segments(cameraID: cam.id!, start90k: s, end90k: e)
            var runs: [RunRow] = []
            for seg in segs {
                let row = SegmentRow(
                    id: seg.id!, start: Time90k.rfc3339(seg.start90k), start90k: seg.start90k,
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
                    runs.append(
                        RunRow(
                            run: seg.runID, start: row.start, start90k: seg.start90k, end: row.end, end90k: seg.end90k,
                            duration90k: seg.duration90k, seconds: row.seconds, bytes: seg.bytes, segments: [row]))
                }
            }
            let timeline = Timeline.slices(segs, within: s..<e)
            let slices = timeline.map {
                SliceRow(
                    start: Time90k.rfc3339($0.start90k), start90k: $0.start90k, end: Time90k.rfc3339($0.end90k),
                    end90k: $0.end90k,
                    seconds: Double($0.duration90k) / 90_000, segments: $0.segments, bytes: $0.bytes)
            }
            if json {
                try printJSON(
                    Output(
                        camera: camera, start: s == .min ? nil : Time90k.rfc3339(s),
                        end: e == .max ? nil : Time90k.rfc3339(e),
                        slices: slices, runs: runs))
                return
            }
            if runs.isEmpty {
                print("no recordings of \(camera) in that range")
                return
            }
            print("slices (contiguous recording\(date != nil ? ", clipped to the day" : "")):")
            printTable(
                ["  START", "END", "DURATION", "SIZE"],
                timeline.map {
                    [
                        "  " + days.format($0.start90k), days.format($0.end90k),
                        Time90k.describeDuration($0.duration90k), formatBytes($0.bytes),
                    ]
                })
            print("")
            for r in runs {
                print(
                    "run \(r.run): \(r.start) → \(r.end)  \(Time90k.describeDuration(r.duration90k))  \(formatBytes(r.bytes))  \(r.segments.count) segments"
                )
                printTable(
                    ["  START", "END", "DURATION", "SIZE", "FRAMES", "STATE", "FILE"],
                    r.segments.map {
                        [
                            "  " + $0.start, $0.end, Time90k.describeDuration($0.duration90k), formatBytes($0.bytes),
                            String($0.frames), $0.state, $0.path,
                        ]
                    })
            }
            let total = runs.reduce(0) { $0 + $1.duration90k }
            print("total: \(Time90k.describeDuration(total)) in \(runs.count) runs")
        }
    }
}

func parseTime(_ s: String, _ what: String) throws -> Int64 {
    switch Time90k.parseChecked(s) {
    case .success(let t): return t
    case .failure(.malformed):
        throw ValidationError("\(what): '\(s.prefix(64))' is not RFC 3339 (2026-11-22T08:00:00Z) or 90 kHz ticks")
    case .failure(let why): throw ValidationError("\(what): '\(s.prefix(64))' \(why)")
    }
}

extension RecordingsCommand {
    struct Days: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The local days of a month that have recordings.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Camera name.") var camera: String
        @Option(help: "Month, YYYY-MM.") var month: String
        @Option(help: "IANA time zone (default: the server's).") var tz: String?
        @Flag(help: "Print JSON.") var json = false

        struct Row: Encodable {
            var date: String
            var seconds: Double
            var cardOnlySeconds: Double
            var slices: Int
        }

        func run() throws {
            let days = try LocalDays(tz: tz)
            let (_, _, index) = try global.open()
            guard let cam = try index.camera(named: camera) else { throw CommandFailure("no camera named '\(camera)'") }
            let month = try days.month(self.month)
            let rows = try Timeline.recordedDays(index: index, cameraID: cam.id!, month: month).map {
                Row(
                    date: $0.date,
                    seconds: Double($0.slices.filter { !$0.onCameraOnly }.reduce(0) { $0 + $1.duration90k }) / 90_000,
                    cardOnlySeconds: Double($0.slices.filter(\.onCameraOnly).reduce(0) { $0 + $1.duration90k })
                        / 90_000, slices: $0.slices.count)
            }
            if json {
                struct Output: Encodable {
                    var camera: String
                    var month: String
                    var tz: String
                    var days: [Row]
                }
                try printJSON(Output(camera: camera, month: self.month, tz: days.name, days: rows))
                return
            }
            if rows.isEmpty {
                print("no recordings of \(camera) in \(self.month) (\(days.name))")
                return
            }
            printTable(
                ["DATE", "RECORDED", "ON CARD ONLY", "SLICES"],
                rows.map {
                    [
                        $0.date, Time90k.describeDuration(Int64($0.seconds * 90_000)),
                        $0.cardOnlySeconds > 0 ? Time90k.describeDuration(Int64($0.cardOnlySeconds * 90_000)) : "-",
                        String($0.slices),
                    ]
                })
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a camera's recordings between two times.",
            discussion:
                "Only segments wholly inside the range are deleted; a segment that straddles an end is kept whole (segments are never cut)."
        )
        @OptionGroup var global: GlobalOptions
        @Option(help: "Camera name.") var camera: String
        @Option(help: "Start (RFC 3339 or 90 kHz ticks).") var start: String
        @Option(help: "End (RFC 3339 or 90 kHz ticks).") var end: String
        @Flag(help: "Do not ask.") var yes = false

        func run() throws {
            let s = try parseTime(start, "--start")
            let e = try parseTime(end, "--end")
            guard s < e else { throw ValidationError("--start must be before --end") }
            let (_, storage, index) = try global.open()
            guard let cam = try index.camera(named: camera) else { throw CommandFailure("no camera named '\(camera)'") }
            let (doomed, kept) = try SegmentDeleter(index: index, storage: storage).segments(
                cameraID: cam.id!, inside: s...e)
            if !kept.isEmpty {
                print("\(kept.count) segments are kept: a clip marked \"keep\" covers them (nvr clips list)")
            }
            if doomed.isEmpty {
                print("nothing to delete: no segment of \(camera) lies wholly inside that range")
                return
            }
            let bytes = doomed.reduce(0) { $0 + $1.bytes }
            print(
                "\(doomed.count) segments, \(formatBytes(bytes)), \(Time90k.rfc3339(doomed.first!.start90k)) → \(Time90k.rfc3339(doomed.last!.end90k))"
            )
            if !yes {
                guard isatty(0) != 0 else { throw CommandFailure("not deleting without --yes (no terminal to ask)") }
                FileHandle.standardError.write(Data("delete them? [y/N] ".utf8))
                guard let answer = readLine(), answer.lowercased().hasPrefix("y") else {
                    print("nothing deleted")
                    return
                }
            }
            let bar = ProgressBar(label: "deleting")
            let deleted = try SegmentDeleter(index: index, storage: storage).delete(doomed, reason: "user") {
                bar.update($0, $1)
            }
            bar.finish()
            AuditLog(index: index).record(
                AuditLog.cliUser, "recordings.delete", target: camera,
                detail: ["start": Time90k.rfc3339(s), "end": Time90k.rfc3339(e), "segments": String(deleted)])
            print("deleted \(deleted) segments (\(formatBytes(bytes)))")
        }
    }
}
