import Foundation
import NVRDetect
import NVRMedia

/// The detector run on one JPEG picture, as `nvr detect` and `POST /api/detect` do it: what it
/// finds at `minScore` or more, and how long the model took (median and p95 over `runs`).
public struct PictureDetection: Encodable, Sendable {
    public struct Found: Encodable, Sendable {
        public var label: String, score: Double
        /// x, y, width, height, each 0…1 of the picture.
        public var box: [Double]
    }
    public var model: String, layout: String, input: String, runtime: String, threads: Int
    public var detections: [Found]
    public var runs: Int, medianMs: Double, p95Ms: Double

    /// Why a picture could not be looked at: the picture's fault, or the detector's.
    public enum Failure: Error, CustomStringConvertible {
        case picture(String)
        case detector(String)
        public var description: String {
            switch self {
            case .picture(let s), .detector(let s): return s
            }
        }
    }

    public init(jpeg: [UInt8], options: DetectionOptions, minScore: Double, runs: Int = 1) throws(Failure) {
        let model: DetectorModel
        do { model = try options.load() } catch { throw .detector("\(error)") }
        let rgb: [UInt8]
        do { rgb = try JPEGDecoder.rgb(jpeg, width: model.inputWidth, height: model.inputHeight) } catch {
            throw .picture("\(error)")
        }
        var found: [Detection] = []
        var times: [Double] = []
        for _ in 0..<max(1, runs) {
            let start = DispatchTime.now().uptimeNanoseconds
            do { found = try rgb.withUnsafeBufferPointer { try model.detect(rgb: $0, minScore: minScore) } } catch {
                throw .detector("the model failed: \(error)")
            }
            times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
        }
        times.sort()
        self.model = model.source
        layout = model.layout.name
        input = "\(model.inputWidth)x\(model.inputHeight)"
        runtime = "ONNX Runtime \(model.runtimeVersion) (\(model.runtimePath))"
        threads = options.threads
        detections = found.map {
            Found(label: $0.label, score: $0.score, box: [$0.box.x, $0.box.y, $0.box.width, $0.box.height])
        }
        self.runs = times.count
        medianMs = times[times.count / 2]
        p95Ms = times[min(times.count - 1, Int((Double(times.count) * 0.95).rounded(.up)) - 1)]
    }
}
