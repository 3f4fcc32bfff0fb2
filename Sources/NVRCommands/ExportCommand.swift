import ArgumentParser
import Foundation
import NVRMedia
import NVRPlayback
import NVRStorage
import NVRTime

/// `nvr export`: one MP4 of a camera's time range, built from the index.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Write one MP4 of a time range (built from the index; nothing is re-encoded).",
        discussion:
            "Gaps in the recording are left out (the parts play back to back) and listed; a codec or resolution change ends the file early."
    )
    @OptionGroup var global: GlobalOptions
    @Option(help: "Camera name.") var camera: String
    @Option(help: "Start (RFC 3339 or 90 kHz ticks).") var start: String
    @Option(help: "End (RFC 3339 or 90 kHz ticks).") var end: String
    @Option(name: .shortAndLong, help: "Output file.") var output: String
    @Flag(help: "Replace the output file if it exists.") var force = false

    func run() throws {
        let s = try parseTime(start, "--start")
        let e = try parseTime(end, "--end")
        guard s < e else { throw ValidationError("--start must be before --end") }
        // A device or pipe (-o /dev/stdout) is written as it is; a file is never replaced unasked.
        var st = stat()
        let existing = stat(output, &st) == 0
        let special = existing && (st.st_mode & S_IFMT) != S_IFREG
        if existing && !special && !force {
            throw CommandFailure("\(output) exists: choose another name, or --force to replace it")
        }
        let (_, storage, index) = try global.open()
        guard let cam = try index.camera(named: camera) else { throw CommandFailure("no camera named '\(camera)'") }
        let result: RangeExport.Result
        do { result = try RangeExport.build(index: index, storage: storage, cameraID: cam.id!, start: s, end: e) } catch
        {
            throw CommandFailure("\(camera): \(error)")
        }
        // Written beside the target and renamed when complete: a failed or interrupted export
        // leaves no half file under the asked name.
        let partial = special ? output : output + ".partial"
        let bar = ProgressBar(label: "writing \(output)")
        do {
            try result.mp4.write(to: partial) { done, total in bar.update(bytes: Int64(done), of: Int64(total)) }
            bar.finish()
            if !special {
                if FileManager.default.fileExists(atPath: output) { try FileManager.default.removeItem(atPath: output) }
                try FileManager.default.moveItem(atPath: partial, toPath: output)
            }
        } catch {
            bar.finish()
            if !special { try? FileManager.default.removeItem(atPath: partial) }
            throw CommandFailure("cannot write \(output): \(plainDescription(error))")
        }
        print(
            "wrote \(output): \(formatBytes(result.mp4.size)), \(Time90k.describeDuration(result.mp4.duration90k)), \(result.mp4.videoSamples) frames"
        )
        for g in result.gaps {
            print("gap (last picture held): \(Time90k.rfc3339(g.lowerBound)) → \(Time90k.rfc3339(g.upperBound))")
        }
        if let t = result.truncatedAt {
            print("ends early at \(Time90k.rfc3339(t)): the camera's codec or resolution changed there")
        }
    }
}
