import Foundation

/// What the detection tests need from the machine: ONNX Runtime from the test venv's
/// `onnxruntime` wheel, the venv's python (the `onnx` package builds small models), and the
/// pictures of Debian's `darknet` package (scripts/install-deps.sh test installs all three).
public enum DetectionFixture {
    /// The test venv (scripts/install-deps.sh test makes it).
    public static var venv: String { TestEnvironment.repoRoot + "/.build/test-venv" }

    /// libonnxruntime.so from the venv's onnxruntime wheel.
    public static var runtime: String {
        get throws {
            let lib = venv + "/lib"
            for python in ((try? FileManager.default.contentsOfDirectory(atPath: lib)) ?? []).sorted()
            where python.hasPrefix("python3") {
                let capi = "\(lib)/\(python)/site-packages/onnxruntime/capi"
                if let so = ((try? FileManager.default.contentsOfDirectory(atPath: capi)) ?? []).sorted().last(where: {
                    $0.hasPrefix("libonnxruntime.so")
                }) {
                    return "\(capi)/\(so)"
                }
            }
            throw FixtureError("no onnxruntime in \(venv) (run scripts/install-deps.sh test)")
        }
    }

    /// Debian's darknet pictures: person.jpg (a person, a dog and a horse), dog.jpg, horses.jpg.
    public static func picture(_ name: String) throws -> String {
        let path = "/usr/share/darknet/data/\(name).jpg"
        guard FileManager.default.fileExists(atPath: path) else {
            throw FixtureError("\(path) missing (run scripts/install-deps.sh test: it installs darknet)")
        }
        return path
    }

    /// Where the person stands in person.jpg (640×424), in pixels: x, y, width, height.
    public static let personInPicture = (x: 186.0, y: 102.0, width: 89.0, height: 280.0)
    /// The part of person.jpg that crosses the test scene (the person and a little around).
    public static let personCrop = "170,85,120,310"
    /// The dog in dog.jpg (768×576), with a little around.
    public static let dogCrop = "120,200,210,350"

    /// Writes the small models of Tests/Support/make_test_models.py into `dir`.
    public static func makeTestModels(in dir: String) throws {
        let r = try runProcess(
            venv + "/bin/python", [TestEnvironment.repoRoot + "/Tests/Support/make_test_models.py", dir])
        guard r.status == 0 else { throw FixtureError("make_test_models.py failed: \(r.stderr)") }
    }

    /// A picture scaled to width × height as packed RGB (ffmpeg).
    public static func rgb(_ path: String, width: Int, height: Int) throws -> [UInt8] {
        let out = TestEnvironment.tempDir("rgb") + "/picture.rgb"
        defer { TestEnvironment.cleanup(URL(fileURLWithPath: out).deletingLastPathComponent().path) }
        let r = try runProcess(
            "/usr/bin/ffmpeg",
            ["-v", "error", "-i", path, "-vf", "scale=\(width):\(height)", "-pix_fmt", "rgb24", "-f", "rawvideo", out])
        guard r.status == 0 else { throw FixtureError("ffmpeg: \(r.stderr)") }
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
    }
}
