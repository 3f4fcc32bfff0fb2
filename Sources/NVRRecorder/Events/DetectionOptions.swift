import Foundation
import NVRDetect
import NVRPluginHost

/// The server's detector: which runtime, model and labels (nvr.toml's [detect]). Every camera
/// with detection on shares the one model; it is loaded when the first such camera starts.
public struct DetectionOptions: Sendable, Equatable {
    /// libonnxruntime.so's path; nil: looked for (ONNXRuntime.candidates).
    public var runtime: String?
    /// An ONNX model of the ssd or yolox layout (design/detection.md); nil: the built-in
    /// person detector.
    public var model: String?
    /// A file of labels, one per line, in the model's class order; needed with `model`.
    public var labels: String?
    /// The channel order the model wants (rgb, or bgr as YOLOX models do).
    public var channelOrder: DetectorModel.ChannelOrder
    /// Threads one inference uses.
    public var threads: Int

    public init(
        runtime: String? = nil, model: String? = nil, labels: String? = nil,
        channelOrder: DetectorModel.ChannelOrder = .rgb, threads: Int = 1
    ) {
        self.runtime = runtime
        self.model = model
        self.labels = labels
        self.channelOrder = channelOrder
        self.threads = threads
    }

    /// The built-in model's file name, and its labels.
    public static let builtInModel = "person-ssdlite.onnx"
    public static let builtInLabels = ["person"]

    /// Where the built-in model is looked for: models/ beside the executable or up to four
    /// folders above it (a build in the source tree), then the installed share folders.
    public static func builtInModelCandidates() -> [String] {
        var out: [String] = []
        var dir = URL(fileURLWithPath: PluginHost.executableDirectory).resolvingSymlinksInPath()
        for _ in 0..<5 {
            out.append(dir.appendingPathComponent("models/\(builtInModel)").path)
            dir.deleteLastPathComponent()
        }
        out += ["/usr/local/share/nvr/models/\(builtInModel)", "/usr/share/nvr/models/\(builtInModel)"]
        return out
    }

    /// Loads the runtime and the model; throws one line saying what is missing or wrong.
    public func load() throws -> DetectorModel {
        let runtime = try ONNXRuntime(explicit: self.runtime)
        let path: String
        let names: [String]
        if let model {
            path = model
            guard let labels else { throw DetectError("detect.labels must name the labels file of \(model)") }
            do {
                names = try String(contentsOfFile: labels, encoding: .utf8).split(whereSeparator: \.isNewline).map {
                    $0.trimmingCharacters(in: .whitespaces).lowercased()
                }.filter { !$0.isEmpty }
            } catch { throw DetectError("cannot read the labels file \(labels): \(error.localizedDescription)") }
        } else {
            let candidates = Self.builtInModelCandidates()
            guard let found = candidates.first(where: { FileManager.default.isReadableFile(atPath: $0) }) else {
                throw DetectError(
                    "the built-in model \(Self.builtInModel) is not installed (looked in \(candidates.last ?? ""))")
            }
            path = found
            names = Self.builtInLabels
        }
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw DetectError("cannot read the model \(path): \(error.localizedDescription)")
        }
        return try DetectorModel(
            runtime: runtime, model: data, source: path, labels: names, channelOrder: channelOrder, threads: threads)
    }
}
