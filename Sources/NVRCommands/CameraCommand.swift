import ArgumentParser
import Foundation
import NVRAccess
import NVRCameras
import NVRIndex
import NVRMQTT
import NVRPluginHost
import NVRStorage
import NVRTime

/// `nvr camera …`: manage cameras in the index.
struct CameraCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "camera", abstract: "Add, list, remove and probe cameras.",
        subcommands: [
            Add.self, List.self, Remove.self, Probe.self, SetSettings.self, Show.self, Enable.self, Disable.self,
            Rename.self,
        ])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a camera (a running `nvr serve` starts recording it within a few seconds).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Camera name (letters, digits, '-', '_', '.').") var name: String
        @Option(help: "Plugin: rtsp, demo, ...") var plugin: String
        @Option(help: "Stream URL (rtsp plugin), e.g. rtsp://user:pass@192.0.2.10:554/stream1") var url: String?
        @Option(name: .customLong("option"), help: "Plugin option key=value (repeatable), e.g. transport=udp")
        var options: [String] = []

        func run() throws {
            let (config, storage, index) = try global.open()
            var cfg = try parseOptions(options)
            if let url {
                if cfg["url"] != nil { throw ValidationError("give the URL once: --url or --option url=, not both") }
                cfg["url"] = url
            }
            let admin = CameraAdmin(
                index: index, storage: storage, plugins: PluginHost(directory: config.resolvedPluginsDir))
            do { try admin.add(name: name, plugin: plugin, config: cfg) } catch {
                throw CommandFailure("cannot add camera: \(error)")
            }
            AuditLog(index: index).record(
                AuditLog.cliUser, "camera.add", target: name, detail: cfg.merging(["plugin": plugin]) { a, _ in a })
            print(
                "added camera \(name) (plugin \(plugin)); \(ServeLock.isHeld(storage: storage) ? "the running nvr serve starts it within a few seconds" : "recorded from the next nvr serve start")"
            )
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List cameras with their state and stored recordings.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false

        struct Row: Encodable {
            var name: String, plugin: String, enabled: Bool, config: [String: String]
            var state: String?, reason: String?, stateSince: String?
            var segments: Int, bytes: Int64
            var oldest: String?, oldest90k: Int64?, newest: String?, newest90k: Int64?
            var mode: String?, motion: String?, detection: String?
            /// The camera's own report through its plugin: `summary` plus plugin-specific fields.
            var camera: JSONValue?
        }

        func run() throws {
            let (_, _, index) = try global.open()
            let rows = try index.cameras().map { c -> Row in
                let o = try CameraOverview.load(c, index: index)
                return Row(
                    name: c.name, plugin: c.plugin, enabled: c.enabled,
                    config: Secrets.redact(config: CameraAdmin.dictionary(c.config)),
                    state: o.state, reason: o.reason, stateSince: o.since90k.map(Time90k.rfc3339),
                    segments: o.storage.segments, bytes: o.storage.bytes,
                    oldest: o.storage.oldest90k.map(Time90k.rfc3339), oldest90k: o.storage.oldest90k,
                    newest: o.storage.newest90k.map(Time90k.rfc3339), newest90k: o.storage.newest90k,
                    mode: o.mode, motion: o.motion, detection: o.detection,
                    camera: o.cameraStatus.flatMap { try? JSONValue(text: $0) })
            }
            if json {
                try printJSON(rows)
                return
            }
            // The broker, as the last nvr serve with [mqtt] said (it saves its state in the index).
            if let mqtt = MQTTSavedStatus.load(from: index) {
                print("mqtt: \(mqtt.summary) (since \(Time90k.rfc3339(mqtt.since90k)))")
            }
            if rows.isEmpty {
                print("no cameras (add one with: nvr camera add NAME --plugin rtsp --url rtsp://...)")
                return
            }
            printTable(
                [
                    "NAME", "PLUGIN", "ENABLED", "MODE", "MOTION", "DETECT", "STATE", "SEGMENTS", "SIZE", "OLDEST",
                    "NEWEST", "CAMERA",
                ],
                rows.map { r -> [String] in
                    var state = r.state ?? "never started"
                    if let reason = r.reason { state += ": " + reason }
                    let enabled = r.enabled ? "yes" : "no"
                    return [
                        r.name, r.plugin, enabled, r.mode ?? "-", r.motion ?? "-", r.detection ?? "-", state,
                        String(r.segments),
                        formatBytes(r.bytes), r.oldest ?? "-", r.newest ?? "-", r.camera?[text: "summary"] ?? "-",
                    ]
                })
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a camera; asks whether its recordings go too.",
            discussion:
                "Kept recordings stay playable and come back on the camera's timeline if one of that name is added again."
        )
        @OptionGroup var global: GlobalOptions
        @Argument var name: String
        @Flag(help: "Keep the camera's recordings (do not ask).") var keepRecordings = false
        @Flag(name: .customLong("yes"), help: "Delete the camera's recordings too (do not ask).") var deleteRecordings =
            false

        func run() throws {
            if keepRecordings && deleteRecordings { throw ValidationError("--keep-recordings or --yes, not both") }
            let (config, storage, index) = try global.open()
            guard let cam = try index.camera(named: name), let id = cam.id else {
                throw CommandFailure("no camera named '\(name)'")
            }
            let summary = try index.storageSummary(cameraID: id)
            var delete = deleteRecordings
            if !keepRecordings && !deleteRecordings && summary.segments > 0 {
                guard isatty(0) != 0 else {
                    throw CommandFailure(
                        "\(name) has \(summary.segments) recordings (\(formatBytes(summary.bytes))): give --keep-recordings or --yes (delete them)"
                    )
                }
                FileHandle.standardError.write(
                    Data(
                        "Delete \(name)'s \(summary.segments) recordings (\(formatBytes(summary.bytes))) too? [y/N] "
                            .utf8))
                delete = (readLine() ?? "").lowercased().hasPrefix("y")
            }
            let admin = CameraAdmin(
                index: index, storage: storage, plugins: PluginHost(directory: config.resolvedPluginsDir))
            do {
                let n = try admin.remove(name: name, deleteRecordings: delete)
                AuditLog(index: index).record(
                    AuditLog.cliUser, "camera.remove", target: name, detail: ["recordings": delete ? "deleted" : "kept"]
                )
                print(
                    delete
                        ? "removed camera \(name) and \(n) segments"
                        : "removed camera \(name); its \(summary.segments) recordings are kept")
            } catch { throw CommandFailure("\(error)") }
        }
    }

    struct Enable: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Record a disabled camera again.")
        @OptionGroup var global: GlobalOptions
        @Argument var name: String
        func run() throws {
            try change(
                global, name, CameraAdmin.Change(enabled: true), action: "camera.enable", done: "enabled \(name)")
        }
    }

    struct Disable: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Stop recording a camera (settings and recordings stay).")
        @OptionGroup var global: GlobalOptions
        @Argument var name: String
        func run() throws {
            try change(
                global, name, CameraAdmin.Change(enabled: false), action: "camera.disable", done: "disabled \(name)")
        }
    }

    struct Rename: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename a camera (its recordings follow).")
        @OptionGroup var global: GlobalOptions
        @Argument var name: String
        @Argument(help: "The new name.") var newName: String
        func run() throws {
            try change(
                global, name, CameraAdmin.Change(name: newName), action: "camera.rename",
                done: "renamed \(name) to \(newName)")
        }
    }

    struct Probe: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Open a camera's stream and print codec, resolution, fps, bit rate and audio.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "A camera in the index.") var name: String?
        @Option(help: "Probe this URL instead (rtsp://, rtsps://, or anything libavformat opens).") var url: String?
        @Option(help: "Transport for --url: tcp or udp.") var transport: String = "tcp"
        @Option(help: "Seconds to wait for the camera.") var timeout: Double = 10
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            if (name == nil) == (url == nil) { throw ValidationError("give a camera NAME or --url URL") }
        }

        func run() throws {
            let source: LiveSource
            if let url {
                var opts: [String: String] = [:]
                if url.hasPrefix("rtsp") { opts["rtsp_transport"] = transport }
                source = LiveSource(url: url, format: nil, options: opts)
            } else {
                let (config, _, index) = try global.open()
                guard let cam = try index.camera(named: name!) else {
                    throw CommandFailure("no camera named '\(name!)'")
                }
                do {
                    let plugin = try PluginHost(directory: config.resolvedPluginsDir).plugin(named: cam.plugin)
                    let instance = try PluginInstance(
                        plugin: plugin, configJSON: cam.config, callbacks: SilentCallbacks())
                    if !plugin.offersLiveURL {
                        print(
                            "\(cam.name): plugin \(plugin.name) pushes its video (\(plugin.description)); nothing to probe"
                        )
                        return
                    }
                    source = try instance.liveSource()
                } catch { throw CommandFailure("\(name!): \(error)") }
            }
            let r: ProbeResult
            do { r = try CameraProbe.probe(source: source, timeout: timeout) } catch {
                throw CommandFailure("probe failed: \(error)")
            }
            if json {
                try printJSON(r)
                return
            }
            print("url:        \(r.url)")
            print("video:      \(r.codec) \(r.width)x\(r.height)")
            print("fps:        \(r.fps.map { String(format: "%.2f", $0) } ?? "unknown")")
            print("bit rate:   \(r.bitRate.map { String(format: "%.0f kbit/s", Double($0) / 1000) } ?? "unknown")")
            print("audio:      \(r.audio ?? "none")")
            for note in r.notes ?? [] { print("note:       \(note)") }
        }
    }
}

/// Options given as key=value.
func parseOptions(_ options: [String]) throws -> [String: String] {
    var cfg: [String: String] = [:]
    for o in options {
        guard let eq = o.firstIndex(of: "="), eq != o.startIndex else {
            throw ValidationError("--option wants key=value, got '\(o)'")
        }
        cfg[String(o[..<eq])] = String(o[o.index(after: eq)...])
    }
    return cfg
}

/// Applies a change to a camera, writes it to the audit log and says what happened.
func change(_ global: GlobalOptions, _ name: String, _ change: CameraAdmin.Change, action: String, done: String) throws
{
    let (config, storage, index) = try global.open()
    let admin = CameraAdmin(index: index, storage: storage, plugins: PluginHost(directory: config.resolvedPluginsDir))
    do { try admin.update(name: name, change) } catch { throw CommandFailure("\(error)") }
    var detail: [String: String] = [:]
    if let url = change.url { detail["url"] = url }
    for (k, v) in change.options { detail[k] = v ?? "(removed)" }
    if let e = change.enabled { detail["enabled"] = String(e) }
    if let n = change.name { detail["name"] = n }
    AuditLog(index: index).record(AuditLog.cliUser, action, target: name, detail: detail)
    print(done + (ServeLock.isHeld(storage: storage) ? " (the running nvr serve applies it within a few seconds)" : ""))
}
