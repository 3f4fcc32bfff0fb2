import Foundation
import NVRIndexPostgres
import NVRMQTT
import NVRPluginHost
import NVRRecorder
import NVRStorage
import TOMLKit

/// Server settings from nvr.toml. Cameras live in the index, not here.
public struct NVRConfig: Sendable, Equatable {
    /// Data root: the index and recordings live under it.
    public var storageRoot: String = "./Storage"
    public var httpBind: String = "127.0.0.1:8080"
    /// Longest range one view.mp4 may cover (its moov grows with the range).
    public var maxViewSeconds: Int = 24 * 3600
    /// HTTPS: a PEM certificate (chain) and its key; both or neither.
    public var tlsCert: String?
    public var tlsKey: String?
    /// Names (besides this machine's own names and addresses) the NVR answers to in `Host`:
    /// a DNS name in front of it, a reverse proxy's.
    public var allowedHosts: [String] = []
    /// Days a login lasts past its last use.
    public var sessionDays: Int = 30
    /// Open HTTP connections one client address may have (a reverse proxy is one address).
    public var maxConnectionsPerAddress: Int = 256
    /// Target segment length; segments are cut at the first key frame after it.
    public var segmentSeconds: Int = 60
    /// Where plugins are loaded from; nil = next to the executable.
    public var pluginsDir: String?
    /// Cameras with a memory card: how often the card is listed (also after every connect).
    public var cardRefreshSeconds: Int = 600
    /// Fill recording gaps from the card automatically.
    public var cardBackfill = true
    /// How far back automatic backfill looks (older gaps only with `nvr card sync --start`).
    public var cardBackfillHours: Int = 24
    /// [mqtt]: the broker, topics and commands; nil: no MQTT.
    public var mqtt: MQTTBridge.Options?
    /// [detect]: the object detector's runtime, model and labels.
    public var detect = DetectionOptions()
    /// [index] url: a PostgreSQL index shared by several nodes; nil: SQLite in the storage root.
    public var indexURL: String?
    /// [index] password_file: the PostgreSQL password (else NVR_INDEX_PASSWORD).
    public var indexPasswordFile: String?
    /// [cluster] node: this server's name as a recorder node sharing the PostgreSQL index
    /// (design/scale-out.md); nil: it records every camera on its own.
    public var clusterNode: String?
    /// [cluster] advertise_url: where the other nodes and users reach this node's HTTP API.
    public var advertiseURL: String?

    public init() {}

    /// The file this configuration was read from; nil = no file, built-in defaults.
    public var source: String?
    /// storage.root was written in the file (the default stays relative to the working directory).
    var storageRootInFile = false

    /// Where a config file is looked for, in order, when none is named: what other daemons do.
    public static let systemPath = "/etc/nvr/nvr.toml"

    /// The file to read: `path` (--config), else `$NVR_CONFIG`, else ./nvr.toml, else
    /// /etc/nvr/nvr.toml when present; nil = none, the built-in defaults. A ./nvr.toml that
    /// belongs to another user (a shared folder like /tmp) is not taken: its plugins.dir would
    /// load that user's code. /etc/nvr is chosen when it exists even if this user cannot look
    /// inside (0750, group nvr), so the error says so instead of silently using the defaults.
    public static func locate(
        path: String?, environment: [String: String] = ProcessInfo.processInfo.environment,
        exists: (String) -> Bool = { FileManager.default.fileExists(atPath: $0) },
        trusted: (String) -> Bool = ownedByCallerOrRoot
    ) -> String? {
        if let path { return path }
        if let env = environment["NVR_CONFIG"], !env.isEmpty { return env }
        if exists("nvr.toml") && trusted("nvr.toml") { return "nvr.toml" }
        if exists(systemPath) || exists((systemPath as NSString).deletingLastPathComponent) { return systemPath }
        return nil
    }

    /// The file belongs to the user running nvr, or to root.
    public static func ownedByCallerOrRoot(_ path: String) -> Bool {
        var st = stat()
        guard stat(path, &st) == 0 else { return false }
        return st.st_uid == 0 || st.st_uid == geteuid()
    }

    /// Loads the file `locate` finds, or the built-in defaults. Relative paths in a file are
    /// taken relative to the file's folder, so the same file works from any working directory.
    public static func load(path: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws
        -> NVRConfig
    {
        guard let chosen = locate(path: path, environment: environment) else { return NVRConfig() }
        guard let text = try? String(contentsOfFile: chosen, encoding: .utf8) else {
            let why =
                access(chosen, R_OK) != 0 && errno == EACCES
                ? ": permission denied (run nvr as the user that owns it, e.g. sudo -u nvr nvr …)" : ""
            throw ConfigError("cannot read config file \(chosen)\(why)")
        }
        var c = try parse(text, source: chosen)
        c.source = URL(fileURLWithPath: chosen).standardizedFileURL.path
        let folder = URL(fileURLWithPath: chosen).standardizedFileURL.deletingLastPathComponent()
        func resolve(_ p: String) -> String {
            p.hasPrefix("/") ? p : folder.appendingPathComponent(p).standardizedFileURL.path
        }
        if c.storageRootInFile { c.storageRoot = resolve(c.storageRoot) }
        c.tlsCert = c.tlsCert.map(resolve)
        c.tlsKey = c.tlsKey.map(resolve)
        c.pluginsDir = c.pluginsDir.map(resolve)
        c.indexPasswordFile = c.indexPasswordFile.map(resolve)
        if let ca = c.mqtt?.connection.tlsCA { c.mqtt?.connection.tlsCA = resolve(ca) }
        c.detect.model = c.detect.model.map(resolve)
        c.detect.labels = c.detect.labels.map(resolve)
        // A runtime named without a folder is for the dynamic loader to find.
        c.detect.runtime = c.detect.runtime.map { $0.contains("/") ? resolve($0) : $0 }
        return c
    }

    /// A node name: what `nvr nodes` shows and segment rows carry.
    public static func isNodeName(_ s: String) -> Bool {
        (1...64).contains(s.utf8.count)
            && s.utf8.allSatisfy {
                ($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x7a || (0x30...0x39).contains($0) || $0 == 0x2d || $0 == 0x5f
            }
    }

    public static func parse(_ text: String, source: String = "config") throws -> NVRConfig {
        let table: TOMLTable
        do { table = try TOMLTable(string: text) } catch {
            throw ConfigError("\(source): not valid TOML: \(error)")
        }
        var c = NVRConfig()
        let known: [String: Set<String>] = [
            "storage": ["root"],
            "http": [
                "bind", "max_view_seconds", "tls_cert", "tls_key", "allowed_hosts", "session_days",
                "max_connections_per_address",
            ], "recording": ["segment_seconds"], "plugins": ["dir"],
            "card": ["refresh_seconds", "backfill", "backfill_hours"], "mqtt": mqttKeys,
            "detect": detectKeys, "index": ["url", "password_file"], "cluster": ["node", "advertise_url"],
        ]
        for key in table.keys {
            guard let allowed = known[key] else { throw ConfigError("\(source): unknown section [\(key)]") }
            guard let section = table[key]?.table else { throw ConfigError("\(source): [\(key)] must be a table") }
            for k in section.keys where !allowed.contains(k) { throw ConfigError("\(source): unknown key \(key).\(k)") }
        }
        if let v = table["storage"]?["root"] {
            guard let s = v.string, !s.isEmpty else {
                throw ConfigError("\(source): storage.root must be a non-empty string")
            }
            c.storageRoot = s
            c.storageRootInFile = true
        }
        if let v = table["http"]?["bind"] {
            guard let s = v.string, s.contains(":") else {
                throw ConfigError("\(source): http.bind must look like \"127.0.0.1:8080\"")
            }
            c.httpBind = s
        }
        if let v = table["http"]?["max_view_seconds"] {
            guard let n = v.int, (60...(31 * 86_400)).contains(n) else {
                throw ConfigError("\(source): http.max_view_seconds must be 60…2678400")
            }
            c.maxViewSeconds = n
        }
        for (key, path) in [("tls_cert", \NVRConfig.tlsCert), ("tls_key", \NVRConfig.tlsKey)] {
            guard let v = table["http"]?[key] else { continue }
            guard let s = v.string, !s.isEmpty else { throw ConfigError("\(source): http.\(key) must be a file path") }
            c[keyPath: path] = s
        }
        guard (c.tlsCert == nil) == (c.tlsKey == nil) else {
            throw ConfigError("\(source): http.tls_cert and http.tls_key go together")
        }
        if let v = table["http"]?["allowed_hosts"] {
            guard let a = v.array, let names = Optional(a.compactMap(\.string)), names.count == a.count else {
                throw ConfigError("\(source): http.allowed_hosts must be a list of names, like [\"nvr.example.com\"]")
            }
            c.allowedHosts = names
        }
        if let v = table["http"]?["session_days"] {
            guard let n = v.int, (1...366).contains(n) else {
                throw ConfigError("\(source): http.session_days must be 1…366")
            }
            c.sessionDays = n
        }
        if let v = table["http"]?["max_connections_per_address"] {
            guard let n = v.int, (1...100_000).contains(n) else {
                throw ConfigError("\(source): http.max_connections_per_address must be 1…100000")
            }
            c.maxConnectionsPerAddress = n
        }
        if let v = table["recording"]?["segment_seconds"] {
            guard let n = v.int, (1...3600).contains(n) else {
                throw ConfigError("\(source): recording.segment_seconds must be 1…3600")
            }
            c.segmentSeconds = n
        }
        if let v = table["card"]?["refresh_seconds"] {
            guard let n = v.int, (5...86_400).contains(n) else {
                throw ConfigError("\(source): card.refresh_seconds must be 5…86400")
            }
            c.cardRefreshSeconds = n
        }
        if let v = table["card"]?["backfill"] {
            guard let b = v.bool else { throw ConfigError("\(source): card.backfill must be true or false") }
            c.cardBackfill = b
        }
        if let v = table["card"]?["backfill_hours"] {
            guard let n = v.int, (1...(24 * 366)).contains(n) else {
                throw ConfigError("\(source): card.backfill_hours must be 1…8784")
            }
            c.cardBackfillHours = n
        }
        if let v = table["plugins"]?["dir"] {
            guard let s = v.string else { throw ConfigError("\(source): plugins.dir must be a string") }
            c.pluginsDir = s
        }
        if let v = table["index"]?["url"] {
            guard let u = v.string else {
                throw ConfigError("\(source): index.url must be a string like \"postgresql://nvr@db.lan/nvr\"")
            }
            do { _ = try PostgresLocation(url: u, environment: [:]) } catch { throw ConfigError("\(source): \(error)") }
            c.indexURL = u
        }
        if let v = table["index"]?["password_file"] {
            guard let s = v.string, !s.isEmpty else {
                throw ConfigError("\(source): index.password_file must be a file path")
            }
            c.indexPasswordFile = s
        }
        if let v = table["cluster"]?["node"] {
            guard let s = v.string, Self.isNodeName(s) else {
                throw ConfigError("\(source): cluster.node must be 1…64 letters, digits, '-' or '_'")
            }
            c.clusterNode = s
        }
        if let v = table["cluster"]?["advertise_url"] {
            guard let s = v.string, s.hasPrefix("http://") || s.hasPrefix("https://") else {
                throw ConfigError("\(source): cluster.advertise_url must be an http:// or https:// URL")
            }
            c.advertiseURL = s
        }
        if c.clusterNode != nil && c.indexURL == nil {
            throw ConfigError("\(source): cluster.node needs [index] url: nodes share a PostgreSQL index")
        }
        c.mqtt = try parseMQTT(table["mqtt"]?.table, source: source)
        c.detect = try parseDetect(table["detect"]?.table, source: source)
        return c
    }

    /// The plugin directory in force: configured, or the executable's own directory.
    public var resolvedPluginsDir: String {
        if let pluginsDir { return pluginsDir }
        return PluginHost.executableDirectory
    }
}
