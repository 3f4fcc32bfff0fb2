import Foundation

/// A misbehaving RTSP camera (Tests/Support/hostile_rtsp_camera.py, one mode per process).
public final class HostileCameraFixture: @unchecked Sendable {
    // @unchecked Sendable: `process` is set once in init and cleared by stop().
    public let mode: String
    public private(set) var port = 0
    private var process: Process?

    public static var scriptPath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("hostile_rtsp_camera.py")
            .path
    }

    /// An Annex B H.264 clip with access unit delimiters and parameter sets before every key
    /// frame, for the modes that stream (made once per test with ffmpeg).
    public static func makeClip(in dir: String) throws -> String {
        let path = dir + "/clip.h264"
        let r = try runProcess(
            "/usr/bin/ffmpeg",
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=15", "-t", "4",
                "-c:v", "libx264", "-g", "15", "-x264-params", "aud=1:repeat-headers=1",
                "-bsf:v", "h264_mp4toannexb", "-f", "h264", path,
            ])
        guard r.status == 0 else { throw FixtureError("ffmpeg could not make the clip: \(r.stderr)") }
        return path
    }

    public init(mode: String, clip: String) throws {
        self.mode = mode
        let (p, text) = try PythonFixture.start([Self.scriptPath, "--mode", mode, "--h264", clip])
        guard let bound = PythonFixture.readyPort(text) else {
            p.terminate()
            throw FixtureError("hostile camera \(mode) did not start: \(text)")
        }
        port = bound
        process = p
    }

    deinit { stop() }

    public var url: String { "rtsp://127.0.0.1:\(port)/stream" }

    public func stop() {
        guard let p = process else { return }
        process = nil
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
    }
}
