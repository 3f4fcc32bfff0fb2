import CNVRPlugin
import PluginSupport

private func camera(_ p: UnsafeMutableRawPointer) -> Insta360Camera {
    Unmanaged<Insta360Camera>.fromOpaque(p).takeUnretainedValue()
}

/// The plugin's static description and C entry points (PluginSupport.cameraEntry).
nonisolated(unsafe) private let entry: UnsafeMutablePointer<nvr_plugin_entry_v1> = {
    return cameraEntry(
        name: "insta360", version: "1.0.0",
        description:
            "Insta360 cameras over OSC: state, card listing and download, camera-side capture on events; live video pushed over RTMP to the NVR's listener",
        capabilities: UInt64(NVR_CAP_LIVE_URL) | UInt64(NVR_CAP_CARD_LIST) | UInt64(NVR_CAP_CARD_DOWNLOAD)
            | UInt64(NVR_CAP_CONTROL) | UInt64(NVR_CAP_DISCOVERY),
        create: { json, host, error in createCamera(json, host, error) { try Insta360Camera(configJSON: $0, host: $1) }
        },
        card: cardCameraFunctions,
        control: nvr_control_functions(nvr_event: { p, json in
            guard let p, let json else { return }
            camera(p).nvrEvent(json: String(cString: json))
        }),
        // /osc/info at the camera's access point address (Insta360Finder).
        discovery: nvr_discovery_functions(discover: { seconds, errorOut in
            do { return makeCString(try Insta360Finder.discover(seconds: seconds)) } catch {
                reportError(error, errorOut)
                return nil
            }
        }),
        whyNoTalk: "Insta360's OSC API has no way to send audio to the camera")
}()

@_cdecl("nvr_plugin_entry")
public func nvrPluginEntry() -> UnsafePointer<nvr_plugin_entry_v1> { UnsafePointer(entry) }
