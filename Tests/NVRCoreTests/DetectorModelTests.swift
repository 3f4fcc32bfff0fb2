import Crypto
import Foundation
import NVRDetect
import NVRRecorder
import Synchronization
import TestSupport
import Testing

/// ONNX Runtime (from the test venv's wheel) running the layouts the NVR reads, on small models
/// whose outputs are known (Tests/Support/make_test_models.py), the built-in person model on
/// Debian's darknet pictures, and every way a model or runtime can be wrong.
@Suite final class DetectorModelTests {
    let dir = TestEnvironment.tempDir("models")
    deinit { TestEnvironment.cleanup(dir) }

    func load(_ file: String, labels: [String] = ["a", "b"]) throws -> DetectorModel {
        try DetectorModel(
            runtime: try ONNXRuntime(explicit: try DetectionFixture.runtime),
            model: try Data(contentsOf: URL(fileURLWithPath: file)), source: file, labels: labels)
    }

    /// Runs a model of 64×64 input on a black picture.
    func detect(_ m: DetectorModel, minScore: Double = 0.5) throws -> [Detection] {
        let picture = [UInt8](repeating: 0, count: m.inputWidth * m.inputHeight * 3)
        return try picture.withUnsafeBufferPointer { try m.detect(rgb: $0, minScore: minScore) }
    }

    func expectBox(_ b: Box, _ x: Double, _ y: Double, _ w: Double, _ h: Double, _ note: Comment? = nil) {
        for (got, want) in [(b.x, x), (b.y, y), (b.width, w), (b.height, h)] {
            #expect(abs(got - want) < 0.001, "\(b) should be \(x), \(y), \(w), \(h)")
        }
    }

    @Test func ssdLayoutDecodesBoxCodesAgainstAnchors() throws {
        try DetectionFixture.makeTestModels(in: dir)
        let m = try load(dir + "/ssd.onnx")
        #expect(m.layout == .ssd(anchors: 4, classes: 2))
        #expect(m.inputWidth == 64 && m.inputHeight == 64)
        let found = try detect(m)
        // Anchor 1 (b, 0.953) first; anchor 0 (a, 0.881); anchor 2 (a, 0.731) overlaps anchor 0
        // entirely and is suppressed; anchor 3 is below the score.
        try #require(found.count == 2, "\(found)")
        #expect(found[0].label == "b" && abs(found[0].score - 1 / (1 + exp(-3))) < 1e-4)
        expectBox(found[0].box, 0, 0.14, 0.4, 0.4)
        #expect(found[1].label == "a" && abs(found[1].score - 1 / (1 + exp(-2))) < 1e-4)
        expectBox(found[1].box, 0.1, 0.1, 0.2, 0.4)
        // A lower threshold lets the third through? No: it is the same box as anchor 0.
        #expect(try detect(m, minScore: 0.1).count == 2)
        // Only the labels asked for.
        let picture = [UInt8](repeating: 0, count: 64 * 64 * 3)
        let onlyA = try picture.withUnsafeBufferPointer { try m.detect(rgb: $0, minScore: 0.5, wanted: ["a"]) }
        #expect(onlyA.map(\.label) == ["a"])
    }

    @Test func yoloxLayoutDecodesGridCells() throws {
        try DetectionFixture.makeTestModels(in: dir)
        let m = try load(dir + "/yolox.onnx")
        #expect(m.layout == .yolox(cells: 84, classes: 2))
        let found = try detect(m)
        try #require(found.count == 2, "\(found)")
        #expect(found[0].label == "b" && abs(found[0].score - 0.72) < 1e-4)
        expectBox(found[0].box, 12.0 / 64, 12.0 / 64, 16.0 / 64, 32.0 / 64)
        #expect(found[1].label == "a" && abs(found[1].score - 0.63) < 1e-4)
        expectBox(found[1].box, 0, 32.0 / 64, 0.5, 0.5)
    }

    @Test func wrongModelsAreRefusedInOneLine() throws {
        try DetectionFixture.makeTestModels(in: dir)
        func message(_ file: String) -> String {
            do {
                _ = try load(file)
                return "loaded"
            } catch { return "\(error)" }
        }
        #expect(message(dir + "/wrong.onnx").contains("neither the ssd nor the yolox layout"))
        #expect(message(dir + "/grey.onnx").contains("should take one [1, 3, H, W] picture"))
        #expect(message(dir + "/huge.onnx").contains("should take one [1, 3, H, W] picture"))
        #expect(message(dir + "/ints.onnx").contains("scores is not float32"), "\(message(dir + "/ints.onnx"))")
        // Bytes that are not a model (a truncated file, another format).
        let good = try Data(contentsOf: URL(fileURLWithPath: dir + "/ssd.onnx"))
        for (name, bytes) in [("half", good.prefix(good.count / 2)), ("text", Data("not a model\n".utf8))] {
            try bytes.write(to: URL(fileURLWithPath: "\(dir)/\(name).onnx"))
            let text = message("\(dir)/\(name).onnx")
            #expect(text.hasPrefix("cannot load the model \(dir)/\(name).onnx"), "\(text)")
            #expect(!text.contains("\n"))
        }
        // Labels that do not cover every class: the rest are named by number.
        let m = try load(dir + "/ssd.onnx", labels: ["a"])
        #expect(try detect(m).map(\.label).sorted() == ["a", "class 1"])
    }

    @Test func aMissingOrForeignRuntimeSaysWhat() throws {
        do {
            _ = try ONNXRuntime(explicit: dir + "/libonnxruntime.so")
            Issue.record("loaded a runtime that does not exist")
        } catch { #expect("\(error)".hasPrefix("cannot load ONNX Runtime from \(dir)/libonnxruntime.so")) }
        // A shared library that is not ONNX Runtime: one of the NVR's own plugins.
        let plugin = TestEnvironment.buildDir + "/libnvr-plugin-demo.so"
        do {
            _ = try ONNXRuntime(explicit: plugin)
            Issue.record("took a plugin for ONNX Runtime")
        } catch { #expect("\(error)".contains("no OrtGetApiBase")) }
        let runtime = try ONNXRuntime(explicit: try DetectionFixture.runtime)
        #expect(runtime.version.hasPrefix("1."))
    }

    @Test func builtInModelIsTheOneItsReadmeNames() throws {
        let path = TestEnvironment.repoRoot + "/models/" + DetectionOptions.builtInModel
        let digest = SHA256.hash(data: try Data(contentsOf: URL(fileURLWithPath: path)))
        let hex = digest.map { String(format: "%02x", $0) }.joined()
        let readme = try String(contentsOfFile: TestEnvironment.repoRoot + "/models/README.md", encoding: .utf8)
        #expect(readme.contains(hex), "models/README.md does not name sha256 \(hex)")
        #expect(DetectionOptions.builtInModelCandidates().contains(path))
    }

    /// The built-in model on whole pictures: the person in person.jpg, nothing in dog.jpg or
    /// horses.jpg (the person model knows no animals).
    @Test func builtInModelFindsThePersonAndNoAnimals() throws {
        let options = DetectionOptions(runtime: try DetectionFixture.runtime)
        let m = try options.load()
        #expect(m.layout == .ssd(anchors: 1917, classes: 1))
        func found(_ name: String) throws -> [Detection] {
            let rgb = try DetectionFixture.rgb(try DetectionFixture.picture(name), width: 300, height: 300)
            return try rgb.withUnsafeBufferPointer { try m.detect(rgb: $0, minScore: 0.5) }
        }
        let people = try found("person")
        try #require(people.count == 1, "\(people)")
        #expect(people[0].label == "person" && people[0].score > 0.9)
        let p = DetectionFixture.personInPicture
        let truth = Box(x: p.x / 640, y: p.y / 424, width: p.width / 640, height: p.height / 424)
        #expect(people[0].box.iou(truth) > 0.7, "\(people[0].box) vs \(truth)")
        #expect(try found("dog").isEmpty)
        #expect(try found("horses").isEmpty)
    }

    /// The detector thread: a camera whose picture is still being looked at has the next one
    /// skipped and counted, and cameras are served in turn.
    @Test func theWorkerSkipsWhileBusyAndTakesCamerasInTurn() throws {
        try DetectionFixture.makeTestModels(in: dir)
        let runtime = try DetectionFixture.runtime
        let file = dir + "/ssd.onnx"
        let worker = DetectorWorker {
            try DetectorModel(
                runtime: try ONNXRuntime(explicit: runtime), model: try Data(contentsOf: URL(fileURLWithPath: file)),
                source: file, labels: ["a", "b"])
        }
        let order = Mutex<[String]>([])
        let firstSeen = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let held = Mutex(false)
        let a = worker.slot(camera: "a") { r in
            guard let at = r.at else { return }
            order.withLock { $0.append("a\(at)") }
            if !held.withLock({
                let was = $0
                $0 = true
                return was
            }) {
                firstSeen.signal()
                release.wait()  // looking at a's first picture takes a while
            }
        }
        let b = worker.slot(camera: "b") { r in if let at = r.at { order.withLock { $0.append("b\(at)") } } }
        worker.start()
        defer { worker.stop() }
        #expect(TestEnvironment.wait(timeout: 10) { if case .ready = worker.currentState { true } else { false } })
        func offer(_ slot: DetectorSlot, _ t: Int64) -> Bool {
            slot.offer(at: t) { buffer, w, h in
                buffer.update(repeating: 0, count: w * h * 3)
                return Box(x: 0, y: 0, width: 1, height: 1)
            }
        }
        #expect(offer(a, 1))
        #expect(firstSeen.wait(timeout: .now() + 10) == .success)
        #expect(!offer(a, 2), "a's slot is still busy")
        #expect(worker.stats.snapshot.skipped["a"] == 1)
        #expect(offer(b, 1))
        release.signal()
        // a offers again as soon as its slot is free; b's waiting picture goes first.
        #expect(TestEnvironment.wait(timeout: 10) { offer(a, 3) })
        #expect(TestEnvironment.wait(timeout: 10) { order.withLock { $0.count } == 3 })
        #expect(order.withLock { $0 } == ["a1", "b1", "a3"])
        #expect(worker.stats.snapshot.inferences == ["a": 2, "b": 1])
    }
}
