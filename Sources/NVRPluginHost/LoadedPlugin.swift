import CNVRPlugin
import Foundation
import Synchronization

/// A plugin library that loaded and passed the ABI check.
/// `@unchecked Sendable`: `entry` points at the plugin's static, immutable description,
/// which lives as long as the process (plugins are never unloaded).
public struct LoadedPlugin: @unchecked Sendable {
    public let name: String
    public let version: String
    public let description: String
    public let path: String
    public let abiVersion: UInt32
    public let capabilities: UInt64
    let entry: UnsafePointer<nvr_plugin_entry_v1>

    public var capabilityNames: [String] { PluginCapability.names(capabilities) }
    public func has(_ cap: UInt64) -> Bool { capabilities & cap != 0 }
    /// The plugin lists a camera's memory card (`nvr card …`).
    public var listsCard: Bool { has(UInt64(NVR_CAP_CARD_LIST)) }
    /// The card functions, if the plugin's entry struct is recent enough to have them.
    var cardFunctions: nvr_card_functions? {
        let end = MemoryLayout<nvr_plugin_entry_v1>.offset(of: \.card)! + MemoryLayout<nvr_card_functions>.size
        return entry.pointee.struct_size >= UInt32(end) ? entry.pointee.card : nil
    }
    /// The control functions, if the plugin's entry struct is recent enough to have them.
    var controlFunctions: nvr_control_functions? {
        let end = MemoryLayout<nvr_plugin_entry_v1>.offset(of: \.control)! + MemoryLayout<nvr_control_functions>.size
        return entry.pointee.struct_size >= UInt32(end) ? entry.pointee.control : nil
    }
    /// True when the host opens the plugin's live URL (rather than receiving pushed packets).
    public var offersLiveURL: Bool { has(UInt64(NVR_CAP_LIVE_URL)) }
    /// The discovery functions, if the plugin's entry struct is recent enough to have them.
    var discoveryFunctions: nvr_discovery_functions? {
        let end =
            MemoryLayout<nvr_plugin_entry_v1>.offset(of: \.discovery)! + MemoryLayout<nvr_discovery_functions>.size
        return entry.pointee.struct_size >= UInt32(end) ? entry.pointee.discovery : nil
    }
    /// The PTZ functions, if the plugin's entry struct is recent enough to have them.
    var ptzFunctions: nvr_ptz_functions? {
        let end = MemoryLayout<nvr_plugin_entry_v1>.offset(of: \.ptz)! + MemoryLayout<nvr_ptz_functions>.size
        return entry.pointee.struct_size >= UInt32(end) ? entry.pointee.ptz : nil
    }
    /// The plugin's cameras may pan, tilt or zoom (each camera says whether it does).
    public var steers: Bool { has(UInt64(NVR_CAP_PTZ)) && ptzFunctions?.ptz != nil }
    /// The plugin's cameras may be talked through (an RTSP back-channel on their live URL).
    public var talks: Bool { has(UInt64(NVR_CAP_TALK)) && offersLiveURL }
    /// Why this plugin's cameras cannot be talked through, as the plugin says it (nil when they
    /// can, or it does not say). Bounded: it is shown to people.
    public var whyNoTalk: String? {
        guard !talks else { return nil }
        let end = MemoryLayout<nvr_plugin_entry_v1>.offset(of: \.talk)! + MemoryLayout<nvr_talk_info>.size
        guard entry.pointee.struct_size >= UInt32(end), let p = entry.pointee.talk.why_not else { return nil }
        return String(String(cString: p).unicodeScalars.prefix(300).map(Character.init))
    }
    /// The plugin looks for its cameras on the network (`nvr discover`).
    public var findsCameras: Bool { has(UInt64(NVR_CAP_DISCOVERY)) && discoveryFunctions?.discover != nil }

    /// Asks the plugin to look for its cameras for about `seconds`; its JSON answer
    /// (nvr_plugin.h, discover). Blocks meanwhile.
    public func findCameras(seconds: Double) throws -> String {
        guard findsCameras, let fn = discoveryFunctions?.discover else {
            throw PluginError("\(name): plugin cannot look for cameras", kind: .unsupported)
        }
        var error: UnsafeMutablePointer<CChar>?
        guard let answer = fn(seconds, &error) else {
            let message = error.map { String(cString: $0) }
            if let error { entry.pointee.free_string(error) }
            throw PluginError("\(name): \(message ?? "discovery failed")")
        }
        defer { entry.pointee.free_string(answer) }
        return String(cString: answer)
    }
}
