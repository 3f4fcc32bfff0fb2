import Foundation

/// A real RTSP camera for tests: GStreamer's RTSP server running Tests/Support/rtsp_camera.py
/// under Debian's /usr/bin/python3 (which has `gi`).
public final class RTSPCameraFixture: @unchecked Sendable {
    // @unchecked Sendable: `process` is only replaced by start()/stop(), which tests call in sequence.
    public struct Options: Sendable {
        public var codec = "h264"
        public var audio = false
        /// The audio format when `audio` is on: aac (RFC 3640), latm (RFC 3016), pcmu, pcma, g726.
        public var audioFormat = "aac"
        public var fps = 15
        public var gopSeconds = 1
        public var width = 640
        public var height = 360
        public var kbps = 800
        public var pattern = "ball"
        public var user: String?
        public var password: String?
        /// More arguments for rtsp_camera.py (the scene's --motion, --light, --t0-file).
        public var extraArguments: [String] = []
        /// An ONVIF audio back-channel (GStreamer's RTSPOnvifMediaFactory) whose G.711 bytes
        /// are written to this file, in `backchannelCodec` ("pcmu" or "pcma").
        public var backchannel: String?
        public var backchannelCodec = "pcmu"
        /// Run inside this network namespace (TestNetwork), reached at `host`.
        public var namespace: String?
        public var host = "127.0.0.1"
        public init() {}

        /// A 320×180 camera (cheap to encode), with an audio back-channel writing to
        /// `backchannel` in `codec` when given.
        public static func small(backchannel: String? = nil, codec: String = "pcmu") -> Options {
            var o = Options()
            o.width = 320
            o.height = 180
            o.backchannel = backchannel
            o.backchannelCodec = codec
            return o
        }
    }

    public let options: Options
    public private(set) var port: Int
    private var process: Process?

    public static var scriptPath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("rtsp_camera.py").path
    }

    /// Starts the camera on `port` (0 = any free port) and waits until it listens.
    public init(_ options: Options = Options(), port: Int = 0) throws {
        self.options = options
        self.port = port
        try start()
    }

    deinit { stop() }

    public var url: String { "rtsp://\(options.host):\(port)/stream" }

    public func url(user: String, password: String) -> String {
        "rtsp://\(user):\(password)@\(options.host):\(port)/stream"
    }

    public func start() throws {
        var args = [
            Self.scriptPath, "--port", String(port), "--codec", options.codec, "--fps", String(options.fps),
            "--gop-seconds", String(options.gopSeconds), "--width", String(options.width),
            "--height", String(options.height), "--kbps", String(options.kbps), "--pattern", options.pattern,
        ]
        if options.audio { args += ["--audio", options.audioFormat] }
        if options.host != "127.0.0.1" { args += ["--address", options.host] }
        if let b = options.backchannel {
            args += ["--backchannel", b, "--backchannel-codec", options.backchannelCodec]
        }
        args += options.extraArguments
        if let u = options.user, let p = options.password { args += ["--user", u, "--password", p] }
        var lastError = ""
        // A just-stopped server's port can take a moment to free up.
        for _ in 0..<20 {
            let (p, line) = try PythonFixture.start(args, namespace: options.namespace)
            if let bound = PythonFixture.readyPort(line) {
                port = bound
                process = p
                return
            }
            lastError = line
            p.terminate()
            p.waitUntilExit()
            Thread.sleep(forTimeInterval: 0.5)
        }
        throw FixtureError("RTSP camera fixture did not start: \(lastError)")
    }

    /// Stops the camera (the port is free again once this returns).
    public func stop() {
        guard let p = process else { return }
        process = nil
        PythonFixture.stop(p)
    }

}

public struct FixtureError: Error, CustomStringConvertible {
    public let description: String
    public init(_ m: String) { description = m }
}
