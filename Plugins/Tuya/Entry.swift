import CNVRPlugin
import PluginSupport

/// The plugin's static description and C entry points (PluginSupport.cameraEntry).
nonisolated(unsafe) private let entry: UnsafeMutablePointer<nvr_plugin_entry_v1> = {
    return cameraEntry(
        name: "tuya", version: "0.1.0",
        description:
            "Tuya IPC cameras: live video from a fresh cloud allocation per connection (or a local RTSP URL), motion and doorbell events over the LAN protocol 3.3/3.4, status data points, cloud-storage recordings on the timeline; SD-card playback is only reachable through Tuya's closed P2P SDK and is not offered",
        capabilities: UInt64(NVR_CAP_LIVE_URL) | UInt64(NVR_CAP_EVENTS) | UInt64(NVR_CAP_CARD_LIST)
            | UInt64(NVR_CAP_DISCOVERY),
        create: { json, host, error in createCamera(json, host, error) { try TuyaCamera(configJSON: $0, host: $1) } },
        // Lists cloud-storage recordings (source "cloud"); reads nothing.
        card: cardListerFunctions,
        discovery: nvr_discovery_functions(discover: { seconds, errorOut in
            do { return makeCString(try TuyaFinder.discover(seconds: seconds)) } catch {
                reportError(error, errorOut)
                return nil
            }
        }),
        whyNoTalk:
            "Tuya cameras talk only through Tuya's closed P2P SDK (\"real-time calls with cameras\"), which this plugin does not link"
    )
}()

@_cdecl("nvr_plugin_entry")
public func nvrPluginEntry() -> UnsafePointer<nvr_plugin_entry_v1> { UnsafePointer(entry) }
