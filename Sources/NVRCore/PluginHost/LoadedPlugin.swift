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
}
