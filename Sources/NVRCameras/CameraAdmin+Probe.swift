import Foundation
import NVRPluginHost

extension CameraAdmin {
    /// What probing a camera's settings found: the stream, or that its plugin pushes video
    /// (nothing to open from here).
    public enum ProbeOutcome: Sendable {
        case stream(ProbeResult)
        case pushes(String)
    }

    /// Opens the stream a camera with these settings would record, for a few seconds, before
    /// anything is saved (the page's "Test"; `nvr camera probe` for a camera in the index).
    /// `camera`: an existing camera whose secrets stand in for "***" and `***@` (what forms are
    /// shown), as long as the settings still point at its address (restoringSecrets).
    /// Throws Failure(.invalid) for settings the plugin refuses, (.notFound) for an unknown
    /// camera; a stream that cannot be opened throws the media error saying why.
    public func probe(plugin name: String, config: [String: String], camera: String?, timeout: Double = 10)
        throws -> ProbeOutcome
    {
        var config = config
        if let camera {
            guard let cam = try index.camera(named: camera) else {
                throw Failure(.notFound, "no camera named '\(camera.prefix(64))'")
            }
            guard cam.plugin == name else {
                throw Failure(.invalid, "\(camera) uses plugin \(cam.plugin), not \(name): its secrets are not used")
            }
            config = try Self.restoringSecrets(config, stored: Self.dictionary(cam.config))
        }
        let instance: PluginInstance
        let plugin: LoadedPlugin
        do {
            plugin = try plugins.plugin(named: name)
            instance = try PluginInstance(
                plugin: plugin, configJSON: try Self.json(config), callbacks: SilentCallbacks())
        } catch let e as PluginError {
            throw Failure(.invalid, e.description)
        }
        guard plugin.offersLiveURL else {
            return .pushes("plugin \(plugin.name) pushes its video (\(plugin.description)); nothing to open from here")
        }
        let source: LiveSource
        do { source = try instance.liveSource() } catch let e as PluginError { throw Failure(.invalid, e.description) }
        return .stream(try CameraProbe.probe(source: source, timeout: timeout))
    }
}
