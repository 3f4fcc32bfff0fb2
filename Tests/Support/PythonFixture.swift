import Foundation

/// The start of every Python simulator the tests use (RTSP, ONVIF, hostile cameras): Debian's
/// python3 running a script, inside a test's network namespace if given, stdout piped so the
/// script's first line ("READY <port>") can be read.
enum PythonFixture {
    /// Starts `/usr/bin/python3 args…` and returns it with the first line it prints.
    static func start(_ args: [String], namespace: String? = nil) throws -> (process: Process, firstLine: String) {
        let p = Process()
        if let namespace {
            p.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
            p.arguments = ["netns", "exec", namespace, "/usr/bin/python3"] + args
        } else {
            p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            p.arguments = args
        }
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        var bytes: [UInt8] = []
        while let b = out.fileHandleForReading.readData(ofLength: 1).first, b != 10 { bytes.append(b) }
        return (p, String(decoding: bytes, as: UTF8.self))
    }

    /// Stops a simulator started here: SIGTERM, then SIGKILL after 3 s (a child spawned from
    /// a worker thread may have SIGTERM blocked), and waits for it.
    static func stop(_ p: Process) {
        if p.isRunning { p.terminate() }
        let deadline = Date(timeIntervalSinceNow: 3)
        while p.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
    }

    /// The port in a "READY <port>" line.
    static func readyPort(_ line: String) -> Int? {
        line.hasPrefix("READY ") ? Int(line.dropFirst(6)) : nil
    }
}
