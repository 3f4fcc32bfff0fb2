import ArgumentParser
import Foundation
import NVRPluginHost

/// `nvr plugins`: what plugins are installed and whether they load.
struct PluginsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugins", abstract: "List camera plugins: version, ABI, capabilities, load errors.")

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Print JSON.") var json = false

    struct Row: Encodable {
        var name: String
        var version: String?
        var abi: UInt32?
        var capabilities: [String]
        var description: String?
        /// Why its cameras cannot be talked through, as the plugin says it.
        var noTalk: String?
        var path: String
        var error: String?
    }

    func run() throws {
        let config = try global.load()
        let host = PluginHost(directory: config.resolvedPluginsDir)
        let rows = host.discover().map { name, result -> Row in
            switch result {
            case .success(let p):
                return Row(
                    name: name, version: p.version, abi: p.abiVersion, capabilities: p.capabilityNames,
                    description: p.description, noTalk: p.whyNoTalk, path: p.path, error: nil)
            case .failure(let e):
                return Row(
                    name: name, version: nil, abi: nil, capabilities: [], description: nil, noTalk: nil,
                    path: host.libraryPath(for: name), error: e.description)
            }
        }
        if rows.isEmpty {
            // No plugin means no camera can record: an error, not a listing.
            let from =
                config.pluginsDir == nil
                ? "the nvr executable's folder" : "plugins.dir of \(config.source ?? "the config")"
            throw CommandFailure(
                "no plugins in \(host.directory) (\(from)); the package installs them in /usr/lib/nvr, a build in .build/debug"
            )
        }
        if json {
            try printJSON(rows)
            return
        }
        printTable(
            ["NAME", "VERSION", "ABI", "CAPABILITIES", "STATUS"],
            rows.map {
                [
                    $0.name, $0.version ?? "-", $0.abi.map(String.init) ?? "-", $0.capabilities.joined(separator: ","),
                    $0.error ?? "ok",
                ]
            })
        // What each plugin says of itself, limits included (e.g. what it cannot reach).
        print("")
        for r in rows { if let d = r.description, !d.isEmpty { print("\(r.name): \(d)") } }
        let silent = rows.filter { $0.error == nil && !$0.capabilities.contains("talk") }
        if !silent.isEmpty {
            print("")
            for r in silent { print("\(r.name) cannot talk: \(r.noTalk ?? "the plugin does not say why")") }
        }
    }
}
