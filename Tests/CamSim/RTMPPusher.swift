import Foundation

/// What an Insta360 (or its phone app) does for live video: pushes H.264 + AAC over RTMP to
/// the NVR's listener. An ffmpeg test pattern, retried until the listener takes it; stop()
/// drops the connection abruptly, as a camera losing Wi-Fi would.
public final class RTMPPusher: @unchecked Sendable {
    // @unchecked Sendable: mutable state is guarded by `lock`.
    public let url: String
    private let width: Int, height: Int, fps: Int
    private let maxSeconds: Int
    private let lock = NSLock()
    private var process: Process?
    private var stopped = false
    private var pushes = 0

    /// `maxSeconds` bounds every push, so a test that dies leaves no pusher behind for long.
    public init(url: String, width: Int = 640, height: Int = 360, fps: Int = 25, maxSeconds: Int = 600) {
        self.url = url
        self.width = width
        self.height = height
        self.fps = fps
        self.maxSeconds = maxSeconds
    }

    /// Connections that lasted more than two seconds.
    public var connections: Int { lock.withLock { pushes } }

    /// Starts pushing on a thread, retrying every half second while the listener refuses.
    public func start() {
        lock.withLock { stopped = false }
        let t = Thread { [self] in
            while !lock.withLock({ stopped }) {
                let p = Process()
                p.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
                p.arguments =
                    ["-hide_banner", "-loglevel", "error", "-nostdin", "-re"]
                    + Insta360Encoding.arguments(width: width, height: height, fps: fps, seconds: Double(maxSeconds))
                    + ["-f", "flv", url]
                p.standardInput = FileHandle.nullDevice
                p.standardOutput = FileHandle.nullDevice
                p.standardError = FileHandle.nullDevice
                let began = Date()
                do { try p.run() } catch { return }
                lock.withLock { process = p }
                if lock.withLock({ stopped }) { kill(p.processIdentifier, SIGKILL) }
                p.waitUntilExit()
                lock.withLock { process = nil }
                if Date().timeIntervalSince(began) > 2 {
                    lock.withLock { pushes += 1 }
                    return  // it was connected: a push that ends is the camera going away
                }
                Thread.sleep(forTimeInterval: 0.5)
            }
        }
        t.name = "rtmp pusher"
        t.start()
    }

    /// Drops the connection at once (SIGKILL: test processes' children have SIGTERM blocked).
    public func stop() {
        let p = lock.withLock { () -> Process? in
            stopped = true
            return process
        }
        if let p, p.isRunning { kill(p.processIdentifier, SIGKILL) }
    }
}

/// How the simulated Insta360 encodes, live and on the card alike: the same H.264 and AAC
/// settings give the same codec parameters, so footage backfilled from the card and the live
/// push fit in one MP4 (a real camera's card and stream differ; the NVR then starts a new file).
enum Insta360Encoding {
    static func arguments(width: Int, height: Int, fps: Int, seconds: Double) -> [String] {
        [
            "-f", "lavfi", "-i", "testsrc2=size=\(width)x\(height):rate=\(fps)",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
            "-t", String(format: "%.3f", seconds), "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency",
            "-g", String(max(fps / 2, 1)), "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "64k",
        ]
    }
}
