import ArgumentParser
import Foundation
import NVRIndex
import NVRStorage
import NVRTime

/// `nvr retention …`: how long footage is kept and how much disk it may use.
struct RetentionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retention", abstract: "Show, set and apply retention limits.",
        discussion: """
            Deletion order: oldest continuous footage first, then oldest event footage. `nvr serve` applies \
            retention every minute and at once when a write fails because the disk is full.
            """,
        subcommands: [Show.self, Set.self, Run.self])

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the limits in force and what each camera stores.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false

        struct CameraRow: Encodable {
            var camera: String, continuousDays: Double?, eventDays: Double?, maxBytes: Int64?, bytes: Int64,
                oldest: String?
        }
        struct Output: Encodable {
            var rootMaxBytes: Int64?
            var minFreePercent: Double
            var fileSystemBytes: Int64?
            var freeBytes: Int64?
            var cameras: [CameraRow]
        }

        func run() throws {
            let (_, storage, index) = try global.open()
            let retention = Retention(index: index, storage: storage, logger: makeLogger())
            let s = try retention.settings()
            let fs = retention.fileSystem()
            let rows = try index.cameras().map { c -> CameraRow in
                let r = try index.retention(cameraID: c.id!)
                let sum = try index.storageSummary(cameraID: c.id!)
                return CameraRow(
                    camera: c.name, continuousDays: r?.continuousDays, eventDays: r?.eventDays, maxBytes: r?.maxBytes,
                    bytes: sum.bytes, oldest: sum.oldest90k.map(Time90k.rfc3339))
            }
            if json {
                try printJSON(
                    Output(
                        rootMaxBytes: s.rootMaxBytes, minFreePercent: s.minFreePercent, fileSystemBytes: fs?.size,
                        freeBytes: fs?.free, cameras: rows))
                return
            }
            print(
                "storage \(storage.root): cap \(s.rootMaxBytes.map(formatBytes) ?? "none"), keep \(s.minFreePercent)% free"
                    + (fs.map { " (file system \(formatBytes($0.size)), \(formatBytes($0.free)) free)" } ?? ""))
            printTable(
                ["CAMERA", "CONTINUOUS", "EVENTS", "MAX SIZE", "STORED", "OLDEST"],
                rows.map {
                    [
                        $0.camera, $0.continuousDays.map { "\($0) days" } ?? "forever",
                        $0.eventDays.map { "\($0) days" } ?? "forever",
                        $0.maxBytes.map(formatBytes) ?? "none", formatBytes($0.bytes), $0.oldest ?? "-",
                    ]
                })
        }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set limits: per camera with --camera, storage-wide without. 'none' clears a limit.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Camera to set limits for.") var camera: String?
        @Option(help: "Days to keep continuous footage (camera).") var continuousDays: String?
        @Option(help: "Days to keep event footage (camera).") var eventDays: String?
        @Option(help: "Size cap, e.g. 500G, 1.5T, 800M (camera, or all recordings without --camera).") var maxSize:
            String?
        @Option(help: "Share of the file system to keep free, e.g. 5% (storage-wide).") var minFree: String?

        func run() throws {
            guard continuousDays != nil || eventDays != nil || maxSize != nil || minFree != nil else {
                throw ValidationError(
                    "nothing to set: give --continuous-days, --event-days, --max-size (with --camera) or --max-size, --min-free"
                )
            }
            let (_, _, index) = try global.open()
            if let camera {
                guard minFree == nil else { throw ValidationError("--min-free is storage-wide: leave out --camera") }
                guard let cam = try index.camera(named: camera) else {
                    throw CommandFailure("no camera named '\(camera)'")
                }
                var r = try index.retention(cameraID: cam.id!) ?? CameraRetention(cameraID: cam.id!)
                if let v = continuousDays { r.continuousDays = try parseDays(v, "--continuous-days") }
                if let v = eventDays { r.eventDays = try parseDays(v, "--event-days") }
                if let v = maxSize { r.maxBytes = try parseSize(v) }
                try index.setRetention(r)
                print(
                    "\(camera): continuous \(r.continuousDays.map { "\($0) days" } ?? "forever"), events \(r.eventDays.map { "\($0) days" } ?? "forever"), cap \(r.maxBytes.map(formatBytes) ?? "none")"
                )
            } else {
                guard continuousDays == nil, eventDays == nil else {
                    throw ValidationError("--continuous-days and --event-days need --camera")
                }
                if let v = maxSize {
                    try index.setSetting(RetentionSettings.rootMaxKey, try parseSize(v).map(String.init))
                }
                if let v = minFree {
                    let t = v.hasSuffix("%") ? String(v.dropLast()) : v
                    guard let p = Double(t), (0...50).contains(p) else {
                        throw ValidationError("--min-free wants a percentage 0–50, e.g. 5%")
                    }
                    try index.setSetting(RetentionSettings.minFreeKey, String(p))
                }
                print("storage-wide limits saved (see: nvr retention show)")
            }
        }
    }

    struct Run: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Apply retention now; with --dry-run only say what would go.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Change nothing.") var dryRun = false
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let (_, storage, index) = try global.open()
            if !dryRun { try NodesCommand.refuseOutsideNodes(index, "retention run") }
            let bar = ProgressBar(label: "deleting")
            let report = try Retention(index: index, storage: storage, logger: makeLogger()).enforce(dryRun: dryRun) {
                bar.update($0, $1)
            }
            bar.finish()
            if json {
                try printJSON(report)
                return
            }
            print("\(dryRun ? "would delete" : "deleted") \(report.segments) segments, \(formatBytes(report.bytes))")
            for (why, n) in report.reasons.sorted(by: { $0.key < $1.key }) { print("  \(n) × \(why)") }
            printTable(
                ["CAMERA", dryRun ? "WOULD GO" : "DELETED", "SIZE", "OLDEST REMAINING"],
                report.cameras.map {
                    [$0.camera, String($0.segments), formatBytes($0.bytes), $0.oldestRemaining ?? "-"]
                })
        }
    }
}

/// "30", "none" or "forever" (what `retention show` prints) → nil.
func parseDays(_ s: String, _ what: String) throws -> Double? {
    if s == "none" || s == "forever" { return nil }
    guard let d = Double(s), d > 0, d <= 36_600 else {
        throw ValidationError("\(what) wants a number of days (up to 36600), 'none' or 'forever'")
    }
    return d
}

/// "500G", "1.5T", "800M", "64K" (powers of 1000), "none" → nil. A bare number is refused:
/// `--max-size 10` meaning 10 bytes surprised everyone who tried it.
func parseSize(_ s: String) throws -> Int64? {
    if s == "none" { return nil }
    let units: [Character: Double] = ["K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12]
    var t = s.uppercased()
    if t.hasSuffix("B") { t.removeLast() }
    guard let u = t.last, let mult = units[u] else {
        throw ValidationError("'\(s)' needs a unit: 500G, 1.5T, 800M or 64K")
    }
    t.removeLast()
    guard let v = Double(t), v > 0, v * mult < 9e18 else {
        throw ValidationError("'\(s)' is not a size like 500G, 1.5T or 800M")
    }
    return Int64(v * mult)
}
