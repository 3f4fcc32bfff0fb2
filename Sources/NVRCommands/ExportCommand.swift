import ArgumentParser
import Foundation
import NVRIndex
import NVRMedia
import NVRPlayback
import NVRStorage
import NVRTime

/// `nvr export`: one MP4 of a camera's time range, a timelapse of it, or a ZIP of several
/// cameras' MP4s of the same range, built from the index.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract:
            "Write one MP4 of a time range, or a ZIP of several cameras' (built from the index; nothing is re-encoded).",
        discussion: """
            Gaps in the recording hold the last picture and are listed; a codec change ends a file early. \
            With several cameras (--camera a,b,c) the output is a ZIP with one MP4 per camera and export.txt. \
            --timelapse N keeps key frames only and plays them N times faster ("a day in two minutes" is 720).
            """
    )
    @OptionGroup var global: GlobalOptions
    @Option(help: "Camera name, or several separated by commas (then the output is a .zip).") var camera: String
    @Option(help: "Start (RFC 3339 or 90 kHz ticks).") var start: String
    @Option(help: "End (RFC 3339 or 90 kHz ticks).") var end: String
    @Option(help: "A timelapse: key frames only, N times faster (2…100000).") var timelapse: Int?
    @Option(name: .shortAndLong, help: "Output file.") var output: String
    @Flag(help: "Replace the output file if it exists.") var force = false

    func run() throws {
        let s = try parseTime(start, "--start")
        let e = try parseTime(end, "--end")
        guard s < e else { throw ValidationError("--start must be before --end") }
        let names = camera.split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard !names.contains(""), Set(names).count == names.count else {
            throw ValidationError("--camera: name each camera once, separated by commas (a,b,c)")
        }
        if let timelapse, !Timelapse.speeds.contains(timelapse) {
            throw ValidationError(
                "--timelapse is \(Timelapse.speeds.lowerBound)…\(Timelapse.speeds.upperBound) times, not \(timelapse)")
        }
        // A device or pipe (-o /dev/stdout) is written as it is; a file is never replaced unasked.
        var st = stat()
        let existing = stat(output, &st) == 0
        let special = existing && (st.st_mode & S_IFMT) != S_IFREG
        if names.count > 1 && !special && !output.lowercased().hasSuffix(".zip") {
            throw ValidationError("several cameras make one ZIP: name the output FILE.zip")
        }
        if existing && !special && !force {
            throw CommandFailure("\(output) exists: choose another name, or --force to replace it")
        }
        let (_, storage, index) = try global.open()
        var cameras: [CameraRecord] = []
        for name in names {
            guard let cam = try index.camera(named: name) else { throw CommandFailure("no camera named '\(name)'") }
            cameras.append(cam)
        }
        // Written beside the target and renamed when complete: a failed or interrupted export
        // leaves no half file under the asked name.
        let partial = special ? output : output + ".partial"
        let bar = ProgressBar(label: "writing \(output)")
        func write(_ body: (String, (Int64, Int64) -> Void) throws -> Void) throws {
            do {
                try body(partial) { done, total in bar.update(bytes: done, of: total) }
                bar.finish()
                if !special {
                    if FileManager.default.fileExists(atPath: output) {
                        try FileManager.default.removeItem(atPath: output)
                    }
                    try FileManager.default.moveItem(atPath: partial, toPath: output)
                }
            } catch {
                bar.finish()
                if !special { try? FileManager.default.removeItem(atPath: partial) }
                throw CommandFailure("cannot write \(output): \(plainDescription(error))")
            }
        }
        if names.count == 1 {
            let result: RangeExport.Result
            do {
                result =
                    if let timelapse {
                        try Timelapse.build(
                            index: index, storage: storage, cameraID: cameras[0].id!, start: s, end: e, speed: timelapse
                        )
                    } else {
                        try RangeExport.build(
                            index: index, storage: storage, cameraID: cameras[0].id!, start: s, end: e)
                    }
            } catch {
                throw CommandFailure("\(names[0]): \(error)")
            }
            try write { try result.mp4.write(to: $0, progress: $1) }
            print("wrote \(output): \(Self.describe(result))")
            Self.printNotes(result, indent: "")
        } else {
            let export: MultiCameraExport
            do {
                export = try MultiCameraExport.build(
                    index: index, storage: storage, cameras: cameras, start: s, end: e, speed: timelapse)
            } catch {
                throw CommandFailure("\(error)")
            }
            try write { try export.archive.write(to: $0, progress: $1) }
            print("wrote \(output): \(formatBytes(export.archive.size)), \(export.files.count) cameras")
            for f in export.files {
                print("  \(f.name): \(Self.describe(f.result))")
                Self.printNotes(f.result, indent: "  ")
            }
            for name in export.empty { print("  \(name): nothing recorded in this range (left out)") }
        }
    }

    static func describe(_ r: RangeExport.Result) -> String {
        "\(formatBytes(r.mp4.size)), \(Time90k.describeDuration(r.mp4.duration90k)), \(r.mp4.videoSamples) frames"
    }

    static func printNotes(_ r: RangeExport.Result, indent: String) {
        for g in r.gaps {
            print(
                "\(indent)gap (last picture held): \(Time90k.rfc3339(g.lowerBound)) → \(Time90k.rfc3339(g.upperBound))")
        }
        if let t = r.truncatedAt {
            print("\(indent)ends early at \(Time90k.rfc3339(t)): the camera's codec or resolution changed there")
        }
    }
}
