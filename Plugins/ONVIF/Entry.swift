import CNVRPlugin
import PluginSupport

/// The plugin's static description and C entry points (PluginSupport.cameraEntry).
nonisolated(unsafe) private let entry: UnsafeMutablePointer<nvr_plugin_entry_v1> = {
    return cameraEntry(
        name: "onvif", version: "1.0.0",
        description:
            "ONVIF cameras (Profile S): stream URIs from the camera's media profiles (main and sub-stream), the camera's own motion, tamper and analytics events over a PullPoint subscription, pan, tilt, zoom and presets through the PTZ service, talk through the audio back-channel",
        capabilities: UInt64(NVR_CAP_LIVE_URL) | UInt64(NVR_CAP_SUBSTREAM) | UInt64(NVR_CAP_EVENTS)
            | UInt64(NVR_CAP_DISCOVERY) | UInt64(NVR_CAP_PTZ) | UInt64(NVR_CAP_TALK),
        create: { json, host, error in createCamera(json, host, error) { try ONVIFCamera(configJSON: $0, host: $1) } },
        discovery: nvr_discovery_functions(discover: { seconds, errorOut in
            do { return makeCString(try ONVIFCamera.discover(seconds: seconds)) } catch {
                reportError(error, errorOut)
                return nil
            }
        }),
        ptz: ptzFunctions)
}()

@_cdecl("nvr_plugin_entry")
public func nvrPluginEntry() -> UnsafePointer<nvr_plugin_entry_v1> { UnsafePointer(entry) }
