import CNVRPlugin
import Foundation
import Logging
import NVRIndex
import NVRMedia

/// Camera management shared by the CLI and (later) the API.
public struct CameraAdmin {
    public let index: IndexDatabase
    public let storage: StorageLayout
    public let plugins: PluginHost

    public init(index: IndexDatabase, storage: StorageLayout, plugins: PluginHost) {
        self.index = index; self.storage = storage; self.plugins = plugins
    }

    /// Adds a camera after its plugin has accepted the config.
    @discardableResult
    public func add(name: String, plugin: String, config: [String: String]) throws -> CameraRecord {
        guard StorageLayout.isValidCameraName(name) else {
            throw PluginError("invalid camera name '\(name)': use letters, digits, '-', '_' and '.' (up to 64)")
        }
        let json = String(decoding: try JSONSerialization.data(withJSONObject: config, options: [.sortedKeys]), as: UTF8.self)
        try validate(plugin: plugin, configJSON: json)
        return try index.addCamera(CameraRecord(name: name, plugin: plugin, config: json, created90k: Time90k.now()))
    }

    /// Asks the plugin to create (and at once destroy) an instance: a bad config is refused here.
    public func validate(plugin name: String, configJSON: String) throws {
        let p = try plugins.plugin(named: name)
        _ = try PluginInstance(plugin: p, configJSON: configJSON, callbacks: SilentCallbacks())
    }

    /// Removes a camera and its recordings (crash safe: mark rows, unlink files, drop rows).
    /// Returns the number of segments deleted.
    @discardableResult
    public func remove(name: String) throws -> Int {
        guard let cam = try index.camera(named: name), let id = cam.id else { throw PluginError("no camera named '\(name)'") }
        let segs = try index.segments(cameraID: id)
        try SegmentDeleter(index: index, storage: storage).delete(segs)
        try index.removeCamera(id: id)
        try? FileManager.default.removeItem(atPath: storage.recordingsDir + "/" + name)
        return segs.count
    }
}

/// Callbacks for instances made only to validate or probe: they ignore everything.
public final class SilentCallbacks: PluginCallbacks, Sendable {
    public init() {}
    public func pluginLog(level: Int32, message: String) {}
    public func pluginConnectionState(_ state: Int32, reason: String?) {}
    public func pluginEvent(json: String) {}
    public func pluginCardMedia(json: String) {}
    public func pluginBeginStreams(_ streams: [StreamDescription]) -> Int32 { 0 }
    public func pluginPacket(_ packet: InputPacket) -> Int32 { 0 }
}

/// Replaces user:password in a URL with *** for display.
public func redactURL(_ url: String) -> String { Demuxer.redact(url) }
