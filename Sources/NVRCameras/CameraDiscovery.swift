import Foundation
import NVRIndex
import NVRPlayback
import NVRPluginHost

/// Finding cameras on the LAN through the plugins that can (`nvr discover`, GET /api/discover):
/// every such plugin looks at once for the same few seconds; what answered is listed with
/// whether it is already added and the `nvr camera add` line that adds it.
public enum CameraDiscovery {
    /// A camera a plugin found.
    public struct Found: Sendable, Equatable, Encodable {
        public var plugin: String
        public var address: String
        public var id: String?
        public var name: String?
        public var model: String?
        /// The `camera add` options that reach it (secrets are the user's to add).
        public var options: [String: String]
        /// Options the user must add (user, password, keys).
        public var needs: [String]
        /// The camera already added for it, if any.
        public var addedAs: String?
        /// A free camera name to add it under.
        public var suggestedName: String
        public var addCommand: String
    }

    public struct Report: Sendable, Encodable {
        public var seconds: Double
        public var found: [Found]
        /// Plugins that looked.
        public var plugins: [String]
        /// Plugins whose search failed, with why.
        public var errors: [String: String]
    }

    public static let maxSeconds = 30.0

    /// Runs every plugin that can look for cameras, in parallel, for `seconds` (0.5…30).
    public static func run(plugins: PluginHost, index: any IndexStore, seconds: Double) throws -> Report {
        let seconds = min(max(seconds, 0.5), maxSeconds)
        let finders = plugins.discover().compactMap { _, result in
            (try? result.get()).flatMap { $0.findsCameras ? $0 : nil }
        }
        // A thread each: they mostly wait for answers, so all look for the same few seconds
        // however few cores there are.
        let answers = Answers(count: finders.count)
        let group = DispatchGroup()
        for (i, p) in finders.enumerated() {
            group.enter()
            Thread.detachNewThread {
                answers.set(i, Result { try parse(try p.findCameras(seconds: seconds), plugin: p.name) })
                group.leave()
            }
        }
        // A plugin still busy well past the time asked is left behind (its thread ends when
        // its own timeouts do) and said to have given no answer.
        _ = group.wait(timeout: .now() + seconds + 10)
        var found: [Found] = []
        var errors: [String: String] = [:]
        for (i, p) in finders.enumerated() {
            switch answers.get(i) {
            case .success(let f): found += f
            case .failure(let e): errors[p.name] = "\(e)"
            case nil: errors[p.name] = "no answer within \(Int(seconds) + 10) s"
            }
        }
        let cameras = try index.cameras()
        var taken = Set(cameras.map(\.name))
        var seen = Set<String>()
        found = found.filter { seen.insert("\($0.plugin) \($0.id ?? $0.address)").inserted }
            .sorted { ($0.plugin, $0.address) < ($1.plugin, $1.address) }
        for i in found.indices {
            found[i].addedAs =
                cameras.first { c in
                    c.plugin == found[i].plugin && matches(found[i].options, CameraAdmin.dictionary(c.config))
                }?.name
            let name = freeName(found[i], taken: taken)
            taken.insert(name)
            found[i].suggestedName = name
            found[i].addCommand = addCommand(found[i], name: name)
        }
        return Report(seconds: seconds, found: found, plugins: finders.map(\.name).sorted(), errors: errors)
    }

    /// A plugin's answer (nvr_plugin.h, discover); outside input, so bounded and checked.
    static func parse(_ json: String, plugin: String) throws -> [Found] {
        guard let o = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
            let list = o["found"] as? [Any]
        else {
            throw PluginError("\(plugin): discovery answer is not {\"found\": [...]}")
        }
        func text(_ v: Any?) -> String? {
            guard let s = v as? String, !s.isEmpty else { return nil }
            // Printed in a terminal table: no control or format characters (escapes, bidi overrides).
            return String(
                String.UnicodeScalarView(
                    s.unicodeScalars.prefix(200).filter { u in
                        let c = u.properties.generalCategory
                        return c != .control && c != .format && c != .lineSeparator && c != .paragraphSeparator
                    }))
        }
        return list.prefix(500).compactMap { item -> Found? in
            guard let d = item as? [String: Any], let address = text(d["address"]) else { return nil }
            var options: [String: String] = [:]
            for (k, v) in (d["options"] as? [String: Any] ?? [:]).prefix(20) {
                if let s = text(v), k.count <= 64, k.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) {
                    options[k] = s
                }
            }
            let needs = (d["needs"] as? [Any] ?? []).prefix(10).compactMap { text($0) }.filter {
                $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
            }
            return Found(
                plugin: plugin, address: address, id: text(d["id"]), name: text(d["name"]), model: text(d["model"]),
                options: options, needs: needs, addedAs: nil, suggestedName: "", addCommand: "")
        }
    }

    /// An added camera is the found one when every option the plugin gave matches its config
    /// (an address given with and without the default port counts as the same).
    static func matches(_ found: [String: String], _ config: [String: String]) -> Bool {
        !found.isEmpty
            && found.allSatisfy { k, v in
                guard let c = config[k] else { return false }
                return c == v || c + ":80" == v || c == v + ":80"
            }
    }

    /// The camera's own name when it makes a valid one, else the plugin and the address's
    /// last part; a number added while the name is taken.
    static func freeName(_ f: Found, taken: Set<String>) -> String {
        func clean(_ s: String) -> String {
            let mapped = s.lowercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "-" }
            return String(String(mapped).split(separator: "-").joined(separator: "-").prefix(40))
        }
        let host = f.address.split(separator: ":").first.map(String.init) ?? f.address
        var base = clean(f.name ?? "")
        if base.isEmpty || !StorageLayout.isValidCameraName(base) {
            base = clean("\(f.plugin)-\(host.split(separator: ".").last.map(String.init) ?? host)")
        }
        if !StorageLayout.isValidCameraName(base) { base = f.plugin }
        var name = base
        var n = 2
        while taken.contains(name) {
            name = "\(base)-\(n)"
            n += 1
        }
        return name
    }

    static func addCommand(_ f: Found, name: String) -> String {
        var parts = ["nvr camera add", name, "--plugin", f.plugin]
        for (k, v) in f.options.sorted(by: { $0.key < $1.key }) { parts += ["--option", shellQuoted("\(k)=\(v)")] }
        for k in f.needs where f.options[k] == nil { parts += ["--option", "\(k)=\(k.uppercased())"] }
        return parts.joined(separator: " ")
    }

    static func shellQuoted(_ s: String) -> String {
        s.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.:/=@".contains($0)) }
            ? s : "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// The plugins' answers, each in its own slot.
    private final class Answers: @unchecked Sendable {
        // @unchecked Sendable: `slots` is behind `lock`.
        private let lock = NSLock()
        private var slots: [Result<[Found], any Error>?]
        init(count: Int) { slots = Array(repeating: nil, count: count) }
        func set(_ i: Int, _ r: Result<[Found], any Error>) {
            lock.lock()
            slots[i] = r
            lock.unlock()
        }
        func get(_ i: Int) -> Result<[Found], any Error>? {
            lock.lock()
            defer { lock.unlock() }
            return slots[i]
        }
    }
}
