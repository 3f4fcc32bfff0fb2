import Foundation
import NVRIndex

/// The MQTT bridge's state as `nvr serve` keeps it in the index (settings key
/// `MQTTBridge.statusKey`, written when it changes): what /api/health, /metrics and
/// `nvr camera list` say about the broker.
public struct MQTTSavedStatus: Codable, Sendable, Equatable {
    /// connecting, connected, refused, unreachable or stopped.
    public var state: String
    public var reason: String?
    public var since90k: Int64
    /// host:port.
    public var broker: String
    public var published: Int
    /// Event messages dropped while the broker was away (the queue was full).
    public var dropped: Int
    /// Event messages waiting for the broker.
    public var queued: Int

    /// The saved state, or nil when this NVR does not use MQTT (or never ran with it).
    public static func load(from index: any IndexStore) -> MQTTSavedStatus? {
        guard let text = try? index.setting(MQTTBridge.statusKey) else { return nil }
        return try? JSONDecoder().decode(MQTTSavedStatus.self, from: Data(text.utf8))
    }

    /// One line: "connected to 127.0.0.1:1883", "refused by …: the broker refused…".
    public var summary: String {
        switch state {
        case "connected": return "connected to \(broker)"
        case "stopped": return "stopped"
        default: return "\(state) (\(broker))\(reason.map { ": \($0)" } ?? "")"
        }
    }
}
