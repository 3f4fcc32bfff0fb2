import ArgumentParser
import Foundation
import NVRIndex
import NVRPlayback
import NVRRecorder
import NVRTime

/// `nvr events …`: what happened, for installers and admins.
struct EventsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events", abstract: "List events (motion, camera-reported).",
        subcommands: [List.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Events of a camera on a local day or between two times, oldest first.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Camera name.") var camera: String
        @Option(help: "A local day, YYYY-MM-DD.") var date: String?
        @Option(help: "IANA time zone for --date and for local times (default: the server's).") var tz: String?
        @Option(help: "Start (RFC 3339, e.g. 2026-11-22T08:00:00Z, or 90 kHz ticks).") var start: String?
        @Option(help: "End (RFC 3339 or 90 kHz ticks).") var end: String?
        @Option(help: "Only this type (motion, doorbell, person, …).") var type: String?
        @Option(help: "Only this label (person, car, …: what detection or the camera named; the same as --type).")
        var label: String?
        @Option(help: "Only detection events whose object stood in this zone.") var zone: String?
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            if date != nil && (start != nil || end != nil) {
                throw ValidationError("give --date or --start and --end, not both")
            }
            if let type, let label, type != label {
                throw ValidationError("--type and --label name the same thing; give one")
            }
            if date == nil && (start == nil || end == nil) {
                throw ValidationError("give --date, or both --start and --end")
            }
        }

        struct Output: Encodable {
            var camera: String
            var start: String
            var end: String
            var events: [EventSummary]
        }

        func run() throws {
            let days = try LocalDays(tz: tz)
            let range: Range<Int64>
            if let date {
                range = try days.day(date)
            } else {
                let s = try parseTime(start!, "--start")
                let e = try parseTime(end!, "--end")
                guard s < e else { throw ValidationError("--start must be before --end") }
                range = s..<e
            }
            let (_, _, index) = try global.open()
            guard let cam = try index.camera(named: camera) else { throw CommandFailure("no camera named '\(camera)'") }
            let now = Time90k.now()
            let events = try index.events(
                cameraID: cam.id!, start90k: range.lowerBound, end90k: range.upperBound, type: type ?? label,
                zone: zone, limit: 100_000
            )
            .map { EventSummary($0, camera: cam.name, now: now) }
            if json {
                try printJSON(
                    Output(
                        camera: camera, start: Time90k.rfc3339(range.lowerBound),
                        end: Time90k.rfc3339(range.upperBound), events: events))
                return
            }
            if events.isEmpty {
                print("no events of \(camera) in that range")
                return
            }
            printTable(
                ["ID", "TYPE", "SOURCE", "START", "END", "SECONDS", "SCORE", "BOX", "ZONES"],
                events.map { e in
                    [
                        String(e.id), e.type, e.source, days.format(e.start90k),
                        e.end90k.map(days.format) ?? "in progress",
                        String(format: "%.1f", e.seconds), e.score.map { String(format: "%.3f", $0) } ?? "-",
                        e.box.map { $0.map { String(format: "%.2f", $0) }.joined(separator: ",") } ?? "-",
                        e.zones.map { $0.joined(separator: ",") } ?? "-",
                    ]
                })
        }
    }
}
