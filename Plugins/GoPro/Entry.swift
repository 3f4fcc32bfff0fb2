import CNVRPlugin
import PluginSupport

/// The plugin's static description and C entry points (PluginSupport.cameraEntry).
nonisolated(unsafe) private let entry: UnsafeMutablePointer<nvr_plugin_entry_v1> = {
    return cameraEntry(
        name: "gopro", version: "1.0.0",
        description:
            "GoPro HERO9–13 over the Open GoPro HTTP API: preview or webcam stream (UDP MPEG-TS), state, SD card listing and download",
        capabilities: UInt64(NVR_CAP_LIVE_URL) | UInt64(NVR_CAP_CARD_LIST) | UInt64(NVR_CAP_CARD_DOWNLOAD)
            | UInt64(NVR_CAP_DISCOVERY),
        create: { json, host, error in createCamera(json, host, error) { try GoProCamera(configJSON: $0, host: $1) } },
        card: cardCameraFunctions,
        // mDNS _gopro-web._tcp, and the access point and USB link addresses (GoProFinder).
        discovery: nvr_discovery_functions(discover: { seconds, errorOut in
            do { return makeCString(try GoProFinder.discover(seconds: seconds)) } catch {
                reportError(error, errorOut)
                return nil
            }
        }),
        whyNoTalk: "GoPro cameras take no audio from the network (their HTTP API has no speaker)")
}()

@_cdecl("nvr_plugin_entry")
public func nvrPluginEntry() -> UnsafePointer<nvr_plugin_entry_v1> { UnsafePointer(entry) }
