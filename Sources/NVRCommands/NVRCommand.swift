import ArgumentParser
import Foundation
import Logging
import NVRIndex
import NVRPlayback
import NVRStorage

/// `nvr`: the root command.
public struct NVRCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "nvr",
        abstract: "A network video recorder: records cameras into indexed MP4 segments.",
        version: NVRVersion.current,
        subcommands: [
            Serve.self, CameraCommand.self, UserCommand.self, TokenCommand.self, TLSCommand.self, PluginsCommand.self,
            DiscoverCommand.self, RecordingsCommand.self, EventsCommand.self, CardCommand.self, ExportCommand.self,
            RetentionCommand.self, DBCommand.self, DetectCommand.self, NodesCommand.self,
        ])

    public init() {}

    /// Runs the command line; a failure is one plain line on stderr and exit status 1 (never
    /// a Swift type name or a Foundation error domain).
    public static func runMain() {
        var command: any ParsableCommand
        do { command = try parseAsRoot() } catch { exit(withError: error) }
        do { try command.run() } catch {
            // Foundation's and the system's errors in plain words; the others (ours, the
            // argument parser's help and version requests) as they are.
            // A ValidationError from run() is a bad value: one line, not the root's usage.
            if let e = error as? ValidationError { exit(withError: CommandFailure(e.message)) }
            let foundation = error is CocoaError || error is POSIXError || type(of: error) is NSError.Type
            exit(withError: foundation ? CommandFailure(plainDescription(error)) : error)
        }
    }
}

/// root working in a storage root that belongs to another user (the package's nvr) would leave
/// root-owned index and recording files there that the service can no longer write.
func refuseRootInForeignRoot(_ storage: StorageLayout) throws {
    var st = stat()
    guard geteuid() == 0, stat(storage.root, &st) == 0, st.st_uid != 0 else { return }
    let owner = getpwuid(st.st_uid).map { String(cString: $0.pointee.pw_name) } ?? "uid \(st.st_uid)"
    throw CommandFailure(
        "\(storage.root) belongs to \(owner): run this as that user (sudo -u \(owner) nvr …), not as root")
}

/// A command about to create an empty storage root says so (and which config led there):
/// otherwise a forgotten --config silently makes ./Storage and reports "no cameras".
func announceIfNew(_ storage: StorageLayout, config: NVRConfig) {
    // With a PostgreSQL index the root holds no index file: the root itself is what is new.
    guard !FileManager.default.fileExists(atPath: config.indexURL == nil ? storage.indexPath : storage.root) else {
        return
    }
    let from =
        config.source.map { "storage.root of \($0)" }
        ?? "no config file (looked for --config, $NVR_CONFIG, ./nvr.toml, \(NVRConfig.systemPath))"
    FileHandle.standardError.write(
        Data("nvr: creating a new, empty storage root \(storage.root) (from \(from))\n".utf8))
}

/// NVR_LOG_LEVEL=trace|debug|info|notice|warning|error (default info).
func logLevelFromEnvironment() -> Logger.Level {
    Logger.Level(rawValue: ProcessInfo.processInfo.environment["NVR_LOG_LEVEL"] ?? "info") ?? .info
}

func makeLogger(_ label: String = "nvr") -> Logger {
    var l = Logger(label: label)
    l.logLevel = logLevelFromEnvironment()
    return l
}

/// Prints JSON for scripts.
func printJSON<T: Encodable>(_ value: T) throws {
    let e = JSONEncoder()
    e.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    print(String(decoding: try e.encode(value), as: UTF8.self))
}

/// Prints rows as an aligned table for people.
func printTable(_ header: [String], _ rows: [[String]]) {
    var widths = header.map(\.count)
    for r in rows { for (i, c) in r.enumerated() where i < widths.count { widths[i] = max(widths[i], c.count) } }
    func line(_ cells: [String]) -> String {
        cells.enumerated().map { i, c in
            i == cells.count - 1 ? c : c.padding(toLength: widths[i], withPad: " ", startingAt: 0)
        }
        .joined(separator: "  ")
    }
    print(line(header))
    for r in rows { print(line(r)) }
}

func formatBytes(_ b: Int64) -> String {
    let units = ["B", "KB", "MB", "GB", "TB"]
    var v = Double(b)
    var u = 0
    while v >= 1000 && u < units.count - 1 {
        v /= 1000
        u += 1
    }
    return u == 0 ? "\(b) B" : String(format: "%.1f %@", v, units[u])
}
