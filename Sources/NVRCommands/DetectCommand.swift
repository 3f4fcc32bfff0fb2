import ArgumentParser
import Foundation
import NVRDetect
import NVRMedia
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

    struct Output: Encodable {
        var model: String, layout: String, input: String, runtime: String, threads: Int
        var detections: [Found]
        var runs: Int, medianMs: Double, p95Ms: Double
        struct Found: Encodable {
            var label: String, score: Double, box: [Double]
        }
    }

    func run() throws {
        let config = try global.load()
        let model: DetectorModel
        do { model = try config.detect.load() } catch { throw CommandFailure("\(error)") }
        let bytes: [UInt8]
        do { bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: picture))) } catch {
            throw CommandFailure("cannot read \(picture): \(error.localizedDescription)")
        }
        let rgb: [UInt8]
        do { rgb = try JPEGDecoder.rgb(bytes, width: model.inputWidth, height: model.inputHeight) } catch {
            throw CommandFailure("\(picture): \(error)")
        }
        var found: [Detection] = []
        var times: [Double] = []
        for _ in 0..<runs {
            let start = DispatchTime.now().uptimeNanoseconds
            found = try rgb.withUnsafeBufferPointer { try model.detect(rgb: $0, minScore: minScore) }
            times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
        }
        times.sort()
        let median = times[times.count / 2]
        let p95 = times[min(times.count - 1, Int((Double(times.count) * 0.95).rounded(.up)) - 1)]
        let out = Output(
            model: model.source, layout: model.layout.name, input: "\(model.inputWidth)x\(model.inputHeight)",
            runtime: "ONNX Runtime \(model.runtimeVersion) (\(model.runtimePath))", threads: config.detect.threads,
            detections: found.map {
                .init(label: $0.label, score: $0.score, box: [$0.box.x, $0.box.y, $0.box.width, $0.box.height])
            }, runs: times.count, medianMs: median, p95Ms: p95)
        if json {
            try printJSON(out)
            return
        }
        print("model    \(out.model) (\(out.layout), \(out.input)) on \(out.runtime)")
        if found.isEmpty { print("found    nothing at a score of \(minScore) or more") }
        for d in found {
            print(
                String(
                    format: "found    %@ %.3f at x %.2f y %.2f w %.2f h %.2f", d.label, d.score, d.box.x, d.box.y,
                    d.box.width, d.box.height))
        }
        print(
            String(
                format: "time     median %.1f ms, p95 %.1f ms over %d run(s), %d thread(s)", median, p95, times.count,
                out.threads))
    }
}
