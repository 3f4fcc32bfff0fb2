import ArgumentParser
import Foundation
import Logging
import NVRIndex
import NVRPlayback
import NVRPluginHost
import NVRRecorder
import NVRStorage
import NVRTime

/// `nvr card …`: what is on a camera's memory card, and filling the NVR's gaps from it.
struct CardCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "card", abstract: "A camera's memory card: list its videos, backfill gaps from it.",
        subcommands: [List.self, Sync.self, Get.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Videos on a camera's card on a local day, as the last sync saw them.",
            discussion:
                "Times are on the NVR's clock (card times converted with the camera's clock offset). COVERED says how much of each video the NVR already has (recorded live or backfilled). Files kept off the timeline (a 360 camera's second lens) show COVERED 'listed only'; 'nvr card get' downloads any file."
        )
        @OptionGroup var global: GlobalOptions
        @Option(help: "Camera name.") var camera: String
        @Option(help: "A local day, YYYY-MM-DD.") var date: String
        @Option(help: "IANA time zone for --date and the times shown (default: the server's).") var tz: String?
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let days = try LocalDays(tz: tz)
            let range = try days.day(date)
            let (config, _, index) = try global.open()
            guard let cam = try index.camera(named: camera) else { throw CommandFailure("no camera named '\(camera)'") }
            let rows = try CardVideo.listed(index: index, cameraID: cam.id!, range: range)
            if json {
                struct Output: Encodable {
                    var camera: String
                    var date: String
                    var tz: String
                    var videos: [CardVideo]
                }
                try printJSON(Output(camera: camera, date: date, tz: days.name, videos: rows))
                return
            }
            if rows.isEmpty {
                let plugins = PluginHost(directory: config.resolvedPluginsDir)
                let hasCard = (try? plugins.plugin(named: cam.plugin))?.listsCard ?? false
                print(
                    hasCard
                        ? "no card videos of \(camera) on \(date) (\(days.name)); run 'nvr card sync --camera \(camera)' to list the card"
                        : "\(camera) (plugin '\(cam.plugin)') has no memory card the NVR can read")
                return
            }
            printTable(
                ["FILE", "WHERE", "START", "END", "LENGTH", "SIZE", "COVERED"],
                rows.map { r in
                    [
                        r.file, r.source, days.format(r.start90k), days.format(r.end90k),
                        Time90k.describeDuration(r.end90k - r.start90k),
                        String(format: "%.1f MB", Double(r.bytes) / 1_048_576),
                        !r.onTimeline
                            ? "listed only"
                            : r.seconds > 0 ? String(format: "%.0f %%", 100 * r.coveredSeconds / r.seconds) : "-",
                    ]
                })
        }
    }

    struct Sync: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List a camera's card now and backfill the NVR's gaps from it.",
            discussion:
                "Reads only the parts of card files that fill gaps (HTTP Range), and stream-copies them into segments marked 'card'. Without --start/--end it looks back card.backfill_hours (default 24 h). Works while 'nvr serve' runs."
        )
        @OptionGroup var global: GlobalOptions
        @Option(help: "Camera name.") var camera: String
        @Option(help: "Backfill from (RFC 3339 or 90 kHz ticks).") var start: String?
        @Option(help: "Backfill until (RFC 3339 or 90 kHz ticks).") var end: String?
        @Flag(help: "Only list the card; do not backfill.") var listOnly = false
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let (config, storage, index) = try global.open()
            guard let cam = try index.camera(named: camera) else { throw CommandFailure("no camera named '\(camera)'") }
            let now = Time90k.now()
            let s =
                try start.map { try parseTime($0, "--start") } ?? now - Int64(config.cardBackfillHours) * 3600 * 90_000
            let e = try end.map { try parseTime($0, "--end") } ?? now
            guard s < e else { throw ValidationError("--start must be before --end") }
            let plugins = PluginHost(directory: config.resolvedPluginsDir)
            let instance = try PluginInstance(
                plugin: try plugins.plugin(named: cam.plugin), configJSON: cam.config, callbacks: SilentCallbacks())
            guard instance.offersCardList else {
                throw CommandFailure("camera \(camera)'s plugin '\(cam.plugin)' cannot read a memory card")
            }
            var logger = Logger(label: "nvr")
            logger.logLevel = .warning
            let writer = IndexWriter(index: index, logger: logger)
            defer { writer.close() }
            let sync = CardSync(
                camera: cam, writer: writer, storage: storage, segmentSeconds: config.segmentSeconds, logger: logger)
            let quiet = json
            let r = try sync.run(
                instance, window: s..<e, backfill: !listOnly,
                progress: { r in
                    // One line per gap filled: backfills of long gaps take a while.
                    if !quiet {
                        FileHandle.standardError.write(
                            Data(
                                String(
                                    format: "gap %d: %d segments so far, %.1f MB read\n", r.gaps, r.segments,
                                    Double(r.bytesFetched) / 1_048_576
                                ).utf8))
                    }
                })
            let out = CardSyncSummary(camera: camera, r)
            if json {
                try printJSON(out)
                return
            }
            let clock =
                r.clockOffsetSeconds.map { String(format: "camera clock %+.0f s from the NVR's", $0) }
                ?? CardSyncSummary.noClock
            print("\(camera): \(r.files) videos on the card (\(clock))")
            if !listOnly {
                print(
                    String(
                        format: "%d gaps, %d segments backfilled (%.1f s of video, %.1f MB read from the card)",
                        r.gaps, r.segments, Double(r.backfilled90k) / 90_000, Double(r.bytesFetched) / 1_048_576))
            }
            for e in r.errors { print("error: \(e)") }
            if !r.errors.isEmpty { throw ExitCode(1) }
        }
    }

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Download one file from a camera's card, as it is (360 files too).",
            discussion:
                "FILE is the id 'nvr card list' shows. Writes to --out (default: the file's name in the current directory) through a temporary file, so an interrupted download leaves nothing half-written."
        )
        @OptionGroup var global: GlobalOptions
        @Option(help: "Camera name.") var camera: String
        @Option(help: "The file's id, as 'nvr card list' shows it.") var file: String
        @Option(help: "Where to write it (default: ./NAME).") var out: String?

        func run() throws {
            let (config, _, index) = try global.open()
            guard let cam = try index.camera(named: camera) else { throw CommandFailure("no camera named '\(camera)'") }
            let plugins = PluginHost(directory: config.resolvedPluginsDir)
            let instance = try PluginInstance(
                plugin: try plugins.plugin(named: cam.plugin), configJSON: cam.config, callbacks: SilentCallbacks())
            guard instance.offersCard else {
                throw CommandFailure("camera \(camera)'s plugin '\(cam.plugin)' cannot read a memory card")
            }
            let target = out ?? String(file.split(separator: "/").last ?? Substring(file))
            let partial = target + ".partial"
            guard FileManager.default.createFile(atPath: partial, contents: nil),
                let handle = FileHandle(forWritingAtPath: partial)
            else {
                throw CommandFailure("cannot write \(partial)")
            }
            var written: Int64 = 0
            var writeError: (any Error)?
            // The size from the card's listing, when the index has it (for the time left).
            let size = try? index.cardSlices(
                cameraID: cam.id!, start90k: Time90k.supported.lowerBound, end90k: Time90k.supported.upperBound,
                includeOffTimeline: true
            ).first { $0.fileID == file }?.bytes
            let bar = ProgressBar(label: "downloading \(target)")
            defer { bar.finish() }
            do {
                _ = try instance.cardRead(id: file, offset: 0, length: -1) { chunk in
                    do {
                        try handle.write(contentsOf: Data(chunk))
                        written += Int64(chunk.count)
                        bar.update(bytes: written, of: size ?? nil)
                        return true
                    } catch {
                        writeError = error
                        return false
                    }
                }
                try handle.close()
                if let writeError { throw CommandFailure("writing \(partial) failed: \(writeError)") }
                if FileManager.default.fileExists(atPath: target) { try FileManager.default.removeItem(atPath: target) }
                try FileManager.default.moveItem(atPath: partial, toPath: target)
            } catch {
                try? handle.close()
                try? FileManager.default.removeItem(atPath: partial)
                throw error
            }
            print(String(format: "%@: %.1f MB", target, Double(written) / 1_048_576))
        }
    }
}
