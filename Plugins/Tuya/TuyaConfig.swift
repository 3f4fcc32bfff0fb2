import Foundation
import PluginSupport
import TuyaAPI

/// A Tuya camera's settings (`nvr camera add NAME --plugin tuya --option key=value`).
struct TuyaConfig {
    var deviceID: String
    /// Cloud OpenAPI: region host and the cloud project's credentials (needed for live video
    /// unless `local_rtsp_url` is given, and for status and cloud recordings).
    var cloudHost: String
    var clientID: String?
    var secret: String?
    /// A local RTSP/ONVIF URL the camera exposes: preferred over cloud allocation when given.
    var localRTSPURL: String?
    var streamType: String
    /// LAN events: the device's address, its local key and protocol version.
    var lanHost: String?
    var lanPort: Int
    var lanVersion: TuyaLAN.Version
    var localKey: String?
    /// Seconds without another motion report before a motion event ends.
    var quietSeconds: Int
    var heartbeatSeconds: Int
    /// Seconds between cloud status reads.
    var statusSeconds: Int
    /// Hours of cloud-storage recordings listed for the timeline (0: none).
    var cloudTimelineHours: Int

    static let options: Set<String> = [
        "device_id", "cloud_host", "client_id", "secret", "local_rtsp_url", "stream_type", "lan_host", "lan_port",
        "lan_version", "local_key", "quiet_seconds", "heartbeat_seconds", "status_seconds", "cloud_timeline_hours",
    ]

    init(json: String) throws {
        let c = try PluginConfig(json: json, allowed: Self.options)
        guard let id = try c.string("device_id"), !id.isEmpty else {
            throw PluginConfigError("option 'device_id' is required")
        }
        deviceID = id
        cloudHost = try c.string("cloud_host") ?? "https://openapi.tuyaus.com"
        guard let u = URLComponents(string: cloudHost), ["http", "https"].contains(u.scheme ?? ""),
            u.host?.isEmpty == false
        else {
            throw PluginConfigError("option 'cloud_host' must look like https://openapi.tuyaeu.com")
        }
        clientID = try c.string("client_id")
        secret = try c.string("secret")
        localRTSPURL = try c.string("local_rtsp_url")
        if let l = localRTSPURL, !(l.hasPrefix("rtsp://") || l.hasPrefix("rtsps://")) {
            throw PluginConfigError("option 'local_rtsp_url' must be an rtsp:// URL")
        }
        guard localRTSPURL != nil || (clientID != nil && secret != nil) else {
            throw PluginConfigError("give 'client_id' and 'secret' (cloud stream allocation) or 'local_rtsp_url'")
        }
        streamType = try c.string("stream_type") ?? "rtsp"
        guard ["rtsp", "hls"].contains(streamType) else {
            throw PluginConfigError("option 'stream_type' must be rtsp or hls")
        }
        lanHost = try c.string("lan_host")
        lanPort = try c.int("lan_port", in: 1...65535) ?? 6668
        switch try c.string("lan_version") ?? "3.3" {
        case "3.3": lanVersion = .v33
        case "3.4": lanVersion = .v34
        default: throw PluginConfigError("option 'lan_version' must be 3.3 or 3.4 (3.5 is not supported)")
        }
        localKey = try c.string("local_key")
        if lanHost != nil {
            guard let k = localKey, k.utf8.count == 16 else {
                throw PluginConfigError("LAN events need option 'local_key' (16 characters)")
            }
        }
        quietSeconds = try c.int("quiet_seconds", in: 1...3600) ?? 10
        heartbeatSeconds = try c.int("heartbeat_seconds", in: 1...120) ?? 10
        statusSeconds = try c.int("status_seconds", in: 1...3600) ?? 60
        cloudTimelineHours = try c.int("cloud_timeline_hours", in: 0...720) ?? 24
    }
}
