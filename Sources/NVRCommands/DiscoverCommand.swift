import ArgumentParser
import Foundation
import NVRCameras
import NVRPluginHost

/// `nvr discover`: the cameras the plugins find on the LAN, with the line that adds each.
struct DiscoverCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "discover",
        abstract:
            "Look for cameras on the LAN (ONVIF's WS-Discovery, GoPro's mDNS and access point, Tuya's broadcasts: every plugin that can look) and print how to add each."
    )

    @OptionGroup var global: GlobalOptions
    @Option(help: "How long to listen for answers (0.5–30 s).") var seconds: Double = 3
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        guard seconds.isFinite, seconds >= 0.5, seconds <= CameraDiscovery.maxSeconds else {
            throw ValidationError("--seconds must be between 0.5 and \(Int(CameraDiscovery.maxSeconds))")
        }
    }

    func run() throws {
        let (config, _, index) = try global.open()
        let host = PluginHost(directory: config.resolvedPluginsDir)
        let report = try CameraDiscovery.run(plugins: host, index: index, seconds: seconds)
        if json {
            try printJSON(report)
            return
        }
        guard !report.plugins.isEmpty else {
            throw CommandFailure(
                "no plugin in \(host.directory) can look for cameras (nvr plugins lists what each can do)")
        }
        for (plugin, why) in report.errors.sorted(by: { $0.key < $1.key }) {
            FileHandle.standardError.write(Data("nvr discover: \(plugin): \(why)\n".utf8))
        }
        guard !report.found.isEmpty else {
            print(
                "nothing answered in \(Self.seconds(report.seconds)) (looked with: \(report.plugins.joined(separator: ", ")))"
            )
            return
        }
        printTable(
            ["PLUGIN", "ADDRESS", "NAME", "MODEL", "ADDED AS"],
            report.found.map {
                [$0.plugin, $0.address, $0.name ?? "-", $0.model ?? "-", $0.addedAs ?? "-"]
            })
        let new = report.found.filter { $0.addedAs == nil }
        guard !new.isEmpty else { return }
        print(new.contains { !$0.needs.isEmpty } ? "\nto add (fill in what is in capitals):" : "\nto add:")
        for f in new { print("  \(f.addCommand)") }
    }

    static func seconds(_ s: Double) -> String { s == s.rounded() ? "\(Int(s)) s" : "\(s) s" }
}
