import Foundation
import Logging
import NVRCommands
import NVRPluginHost
import Synchronization

/// Paths and helpers shared by the tests.
public enum TestEnvironment {
    /// The build folder holding this test binary, the `nvr` executable and the plugin libraries.
    public static var buildDir: String {
        PluginHost.executableDirectory
    }

    public static var nvrExecutable: String { buildDir + "/nvr" }

    /// The repository checkout (this file is Tests/Support/TestEnvironment.swift).
    public static var repoRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }

    /// A fresh temporary folder, removed by the caller with `cleanup`.
    public static func tempDir(_ name: String = "nvr-test") -> String {
        let path = NSTemporaryDirectory() + "\(name)-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    public static func cleanup(_ path: String) { try? FileManager.default.removeItem(atPath: path) }

    public static var logger: Logger {
        var l = Logger(label: "test")
        l.logLevel = .warning
        return l
    }

    /// Config for a test: storage under `root`, short segments, plugins from the build folder.
    public static func config(root: String, segmentSeconds: Int = 3, pluginsDir: String? = nil) -> NVRConfig {
        var c = NVRConfig()
        c.storageRoot = root
        c.segmentSeconds = segmentSeconds
        c.pluginsDir = pluginsDir ?? buildDir
        return c
    }

    /// Waits until `condition` holds or `timeout` passes; returns whether it held.
    @discardableResult
    public static func wait(timeout: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let end = Date(timeIntervalSinceNow: timeout)
        while Date() < end {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.2)
        }
        return try condition()
    }
}

/// Writes an nvr.toml for a CLI or `nvr serve` process under `root` (storage in root/Storage).
public func writeConfig(root: String, plugins: String, segmentSeconds: Int = 60, httpBind: String? = nil) throws
    -> String
{
    let path = root + "/nvr.toml"
    var text = """
        [storage]
        root = "\(root)/Storage"
        [recording]
        segment_seconds = \(segmentSeconds)
        [plugins]
        dir = "\(plugins)"

        """
    if let httpBind { text += "[http]\nbind = \"\(httpBind)\"\n" }
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

/// Adds `text` at the end of a file (a config's extra sections).
public func append(_ text: String, to path: String) throws {
    let h = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    h.seekToEndOfFile()
    h.write(Data(text.utf8))
    try h.close()
}

/// `nvr serve --no-demo --config CONFIG` (and `extra`) as a child, its output appended to `log`.
public func startServe(_ config: String, log: String, extra: [String] = []) throws -> Process {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: TestEnvironment.nvrExecutable)
    p.arguments = ["serve", "--no-demo", "--config", config] + extra
    if !FileManager.default.fileExists(atPath: log) { FileManager.default.createFile(atPath: log, contents: nil) }
    let h = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
    h.seekToEndOfFile()
    p.standardError = h
    p.standardOutput = h
    try p.run()
    return p
}

/// Runs a program and captures its output.
public struct ProcessResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    public init(status: Int32, stdout: String, stderr: String) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }
}

public func runProcess(_ path: String, _ args: [String], cwd: String? = nil, environment: [String: String]? = nil)
    throws -> ProcessResult
{
    let p = Process()
    p.executableURL = URL(fileURLWithPath: path)
    p.arguments = args
    if let environment { p.environment = environment }
    if let cwd { p.currentDirectoryURL = URL(fileURLWithPath: cwd) }
    let out = Pipe()
    let err = Pipe()
    p.standardOutput = out
    p.standardError = err
    try p.run()
    // Read both pipes to the end before waiting, so a chatty child never blocks.
    nonisolated(unsafe) var e = Data()
    let group = DispatchGroup()
    DispatchQueue.global().async(group: group) { e = err.fileHandleForReading.readDataToEndOfFile() }
    let o = out.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    p.waitUntilExit()
    return ProcessResult(
        status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
        stderr: String(decoding: e, as: UTF8.self))
}

/// What ffprobe says about a file's streams.
public struct ProbedStream: Sendable {
    public var codec: String
    public var frames: Int
    public var duration: Double
}

/// A GET to the server on `port` with an API token, as curl: the body (or `file` holds it),
/// then a line with the HTTP status.
public func httpGet(port: Int, _ path: String, token: String, to file: String? = nil) throws -> ProcessResult {
    try runProcess(
        "/usr/bin/curl",
        [
            "-s", "-o", file ?? "/dev/stdout", "-w", "\n%{http_code}", "-H", "Authorization: Bearer \(token)",
            "http://127.0.0.1:\(port)\(path)",
        ])
}

/// The H.264 frames ffprobe decodes in an MP4 (0 without video).
public func h264Frames(_ file: String) throws -> Int {
    try ffprobeStreams(file).first { $0.codec == "h264" }?.frames ?? 0
}

/// Decodes every frame of `path` with ffprobe (-count_frames) and reports each stream.
public func ffprobeStreams(_ path: String) throws -> [ProbedStream] {
    let r = try runProcess(
        "/usr/bin/ffprobe",
        [
            "-v", "error", "-count_frames", "-show_entries",
            "stream=codec_name,nb_read_frames,duration", "-of", "json", path,
        ])
    guard r.status == 0, r.stderr.isEmpty else { throw FixtureError("ffprobe failed on \(path): \(r.stderr)") }
    struct Out: Decodable {
        // swift-format-ignore: AlwaysUseLowerCamelCase
        // The names are ffprobe's JSON keys.
        struct S: Decodable {
            var codec_name: String
            var nb_read_frames: String?
            var duration: String?
        }
        var streams: [S]
    }
    let out = try JSONDecoder().decode(Out.self, from: Data(r.stdout.utf8))
    return out.streams.map {
        ProbedStream(
            codec: $0.codec_name, frames: Int($0.nb_read_frames ?? "") ?? -1, duration: Double($0.duration ?? "") ?? 0)
    }
}

/// Decodes every frame of every stream of `path` (ffprobe -show_frames, which decodes without
/// muxing) and returns what the decoders complained about: "" for a clean file. `ffmpeg -f
/// null` is not used: its muxer re-times frames on a frame rate it guesses, and a file whose
/// picture is held through a gap makes it guess low and print timestamp warnings.
public func decodeErrors(_ path: String) throws -> String {
    let r = try runProcess("/usr/bin/ffprobe", ["-v", "error", "-show_entries", "frame=pts", "-of", "csv", path])
    return r.status == 0 ? r.stderr : "ffprobe exited \(r.status): \(r.stderr)"
}

extension TestEnvironment {
    /// Waits without blocking a thread (tests that run HTTP servers in-process need the
    /// concurrency pool free): polls `condition` every 0.2 s until it holds or `timeout` passes.
    @discardableResult
    public static func eventually(timeout: Double, _ condition: () throws -> Bool) async rethrows -> Bool {
        let end = Date(timeIntervalSinceNow: timeout)
        while Date() < end {
            if try condition() { return true }
            try? await Task.sleep(nanoseconds: 200_000_000)
        }
        return try condition()
    }

    /// Runs blocking work (a child process, SQLite, ffprobe) on a Dispatch thread.
    public static func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { c in
            DispatchQueue.global().async { c.resume(with: Result { try body() }) }
        }
    }
}

extension TestEnvironment {
    /// Starts a server task whose `run` reports its bound port once, and waits (without
    /// blocking a thread) for that port; fails if `run` ends before binding.
    public static func startServer(
        _ what: String, _ run: @escaping @Sendable (@escaping @Sendable (Int) -> Void) async throws -> Void
    ) async throws -> Int {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Int, any Error>) in
            let once = Mutex<CheckedContinuation<Int, any Error>?>(c)
            Task {
                do { try await run { p in once.withLock { $0.take() }?.resume(returning: p) } } catch {
                    once.withLock { $0.take() }?.resume(throwing: error)
                }
                once.withLock { $0.take() }?.resume(throwing: FixtureError("\(what) stopped before it listened"))
            }
        }
    }
}

extension TestEnvironment {
    /// A loopback port free right now (TCP, or UDP), for a listener a test configures.
    public static func freePort(udp: Bool = false) -> Int {
        let fd = socket(AF_INET, Int32(udp ? SOCK_DGRAM.rawValue : SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        return Int(UInt16(bigEndian: a.sin_port))
    }
}

/// Resident memory of a process, bytes (0 if it is gone).
public func processRSS(_ pid: Int32) -> Int {
    guard let s = try? String(contentsOfFile: "/proc/\(pid)/statm", encoding: .utf8) else { return 0 }
    let f = s.split(separator: " ")
    return f.count > 1 ? (Int(f[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
}

/// User + system CPU seconds a process has used.
public func processCPUSeconds(_ pid: Int32) -> Double {
    guard let s = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = s.lastIndex(of: ")")
    else { return 0 }
    let f = s[s.index(after: close)...].split(separator: " ")
    // Fields after the command: state is [0], utime [11], stime [12].
    guard f.count > 12, let u = Double(f[11]), let k = Double(f[12]) else { return 0 }
    return (u + k) / Double(sysconf(Int32(_SC_CLK_TCK)))
}
