import Foundation
import NVRFuzzTargets
import Testing

/// Replays every input kept for the fuzzing targets — seeds from real captures and whatever
/// `make fuzz` once found — through the same entry points libFuzzer drives. A crash or a
/// broken invariant here ends the test process, which fails the run.
struct FuzzRegressionTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/fuzz")

    static var targets: [String] { FuzzTargets.names }

    @Test(arguments: targets)
    func replaysKeptInputs(target: String) throws {
        let run = try #require(FuzzTargets.all[target])
        let dir = Self.root.appendingPathComponent(target)
        let files =
            (try? FileManager.default.contentsOfDirectory(atPath: dir.path))?.filter { !$0.hasPrefix(".") }.sorted()
            ?? []
        #expect(!files.isEmpty, "no inputs kept for \(target) in \(dir.path): seed it (bench/fuzz/README.md)")
        for f in files {
            let data = try Data(contentsOf: dir.appendingPathComponent(f))
            data.withUnsafeBytes { run($0) }
        }
    }

    @Test func everyKeptDirectoryIsATarget() throws {
        let dirs = (try? FileManager.default.contentsOfDirectory(atPath: Self.root.path)) ?? []
        for d in dirs where !d.hasPrefix(".") {
            #expect(FuzzTargets.all[d] != nil, "Tests/Fixtures/fuzz/\(d) names no target")
        }
    }
}
