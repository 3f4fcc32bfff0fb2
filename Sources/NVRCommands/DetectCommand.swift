import ArgumentParser
import Foundation
import NVRRecorder

/// `nvr detect PICTURE.jpg`: runs the configured detector ([detect] in nvr.toml, else the
/// built-in person model) on a picture and says what it found and how long it took: a check
/// that the runtime and model load, and bench/detect's inference timing.
struct DetectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "detect",
        abstract: "Run the object detector on a JPEG picture: what it finds, and how long it takes.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "A JPEG picture.") var picture: String
    @Option(parsing: .unconditional, help: "The lowest score shown, 0…1 (default 0.5).") var minScore: Double = 0.5
    @Option(
        name: .customLong("repeat"), parsing: .unconditional,
        help: "Run the model this many times and print the median and p95 time.")
    var runs: Int = 1
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        guard (1...100_000).contains(runs) else { throw ValidationError("--repeat must be 1…100000") }
        guard minScore > 0, minScore < 1 else { throw ValidationError("--min-score must be between 0 and 1") }
    }

    func run() throws {
        let config = try global.load()
        let bytes: [UInt8]
        do { bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: picture))) } catch {
            throw CommandFailure("cannot read \(picture): \(error.localizedDescription)")
        }
        let out: PictureDetection
        do { out = try PictureDetection(jpeg: bytes, options: config.detect, minScore: minScore, runs: runs) } catch {
            switch error {
            case .picture(let why): throw CommandFailure("\(picture): \(why)")
            case .detector(let why): throw CommandFailure(why)
            }
        }
        if json {
            try printJSON(out)
            return
        }
        print("model    \(out.model) (\(out.layout), \(out.input)) on \(out.runtime)")
        if out.detections.isEmpty { print("found    nothing at a score of \(minScore) or more") }
        for d in out.detections {
            print(
                String(
                    format: "found    %@ %.3f at x %.2f y %.2f w %.2f h %.2f", d.label, d.score, d.box[0], d.box[1],
                    d.box[2], d.box[3]))
        }
        print(
            String(
                format: "time     median %.1f ms, p95 %.1f ms over %d run(s), %d thread(s)", out.medianMs, out.p95Ms,
                out.runs, out.threads))
    }
}
