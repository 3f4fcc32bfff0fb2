import Foundation

/// A detection model ready to run: the session, its layout, input size and labels, and a
/// preallocated input tensor. Used by one thread at a time (the detector worker's).
public final class DetectorModel {
    public enum ChannelOrder: String, Sendable { case rgb, bgr }

    public let layout: ModelLayout
    public let inputWidth: Int
    public let inputHeight: Int
    /// Class names in the model's order (without SSD's background class).
    public let labels: [String]
    public let channelOrder: ChannelOrder
    /// Where the model came from (for messages).
    public let source: String
    /// The runtime's version and where it was loaded from (for the log).
    public var runtimeVersion: String { session.runtime.version }
    public var runtimePath: String { session.runtime.path }
    private let session: ONNXSession
    private var input: [Float]

    /// Loads `model` (ONNX bytes) named `source`. Throws one line when the runtime cannot load it
    /// or its input or outputs are not a layout the NVR reads.
    public init(
        runtime: ONNXRuntime, model: Data, source: String, labels: [String], channelOrder: ChannelOrder = .rgb,
        threads: Int = 1
    ) throws {
        let session: ONNXSession
        do { session = try ONNXSession(runtime: runtime, model: model, threads: threads) } catch {
            throw DetectError("cannot load the model \(source): \(error)")
        }
        guard session.inputs.count == 1, let shape = session.inputs.first?.shape, shape.count == 4, shape[1] == 3,
            shape[0] == 1 || shape[0] == -1, (16...2048).contains(shape[2]), (16...2048).contains(shape[3])
        else {
            let got = session.inputs.map { "\($0.name) \(ModelLayout.describe([$0.shape]))" }.joined(separator: ", ")
            throw DetectError("the model \(source) should take one [1, 3, H, W] picture; it takes \(got)")
        }
        inputHeight = Int(shape[2])
        inputWidth = Int(shape[3])
        do {
            layout = try ModelLayout.recognise(
                outputs: session.outputs.map(\.shape), inputWidth: inputWidth, inputHeight: inputHeight)
        } catch { throw DetectError("the model \(source): \(error)") }
        guard !labels.isEmpty else { throw DetectError("the model \(source) has no labels") }
        self.labels = labels
        self.channelOrder = channelOrder
        self.source = source
        self.session = session
        input = [Float](repeating: 0, count: 3 * inputWidth * inputHeight)
    }

    /// The name of class `index` as the layout numbers it (SSD: 1-based after the background).
    func label(_ index: Int) -> String? {
        let i: Int
        switch layout {
        case .ssd: i = index - 1
        case .yolox: i = index
        }
        guard i >= 0 else { return nil }
        return i < labels.count ? labels[i] : "class \(i)"
    }

    /// Finds objects in a picture of exactly the model's input size, packed RGB (3 bytes a
    /// pixel, rows of `inputWidth`). Boxes are normalised to that picture. `wanted` filters labels
    /// (empty: all).
    public func detect(rgb: UnsafeBufferPointer<UInt8>, minScore: Double, wanted: Set<String> = []) throws
        -> [Detection]
    {
        let plane = inputWidth * inputHeight
        guard rgb.count >= plane * 3 else { throw DetectError("a picture of \(rgb.count) bytes for \(plane) pixels") }
        let (r, b) = channelOrder == .rgb ? (0, 2) : (2, 0)
        input.withUnsafeMutableBufferPointer { f in
            for i in 0..<plane {
                f[r * plane + i] = Float(rgb[3 * i])
                f[plane + i] = Float(rgb[3 * i + 1])
                f[b * plane + i] = Float(rgb[3 * i + 2])
            }
        }
        let shape: [Int64] = [1, 3, Int64(inputHeight), Int64(inputWidth)]
        let outputs = try input.withUnsafeMutableBufferPointer { try session.run(input: $0, shape: shape) }
        let name: (Int) -> String? = { [self] c in
            guard let l = label(c) else { return nil }
            return wanted.isEmpty || wanted.contains(l) ? l : nil
        }
        let found: [Detection]
        switch layout {
        case .ssd(_, let classes):
            guard outputs.count == 3 else { throw DetectError("the model gave \(outputs.count) outputs, not 3") }
            found = BoxDecoder.ssd(
                codes: outputs[0].values, logits: outputs[1].values, anchors: outputs[2].values, classes: classes,
                minScore: minScore, label: name)
        case .yolox(_, let classes):
            guard outputs.count == 1 else { throw DetectError("the model gave \(outputs.count) outputs, not 1") }
            found = BoxDecoder.yolox(
                rows: outputs[0].values, width: inputWidth, height: inputHeight, classes: classes, minScore: minScore,
                label: name)
        }
        return Detection.suppress(found)
    }
}
