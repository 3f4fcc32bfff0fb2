import CNVRPlugin
import PluginSupport

private func camera(_ p: UnsafeMutableRawPointer) -> Insta360Camera { Unmanaged<Insta360Camera>.fromOpaque(p).takeUnretainedValue() }

/// The plugin's static description and C entry points.
nonisolated(unsafe) private let entry: UnsafeMutablePointer<nvr_plugin_entry_v1> = {
    let e = UnsafeMutablePointer<nvr_plugin_entry_v1>.allocate(capacity: 1)
    e.initialize(to: nvr_plugin_entry_v1(
        abi_version: NVR_PLUGIN_ABI_VERSION,
        struct_size: UInt32(MemoryLayout<nvr_plugin_entry_v1>.size),
        name: staticCString("insta360"),
        version: staticCString("1.0.0"),
        description: staticCString("Insta360 cameras over OSC: state, card listing and download, camera-side capture on events; live video pushed over RTMP to the NVR's listener"),
        capabilities: UInt64(NVR_CAP_LIVE_URL) | UInt64(NVR_CAP_CARD_LIST) | UInt64(NVR_CAP_CARD_DOWNLOAD) | UInt64(NVR_CAP_CONTROL),
        create: { json, host, errorOut in
            guard let host else { reportError(PluginConfigError("no host callbacks"), errorOut); return nil }
            do {
                let cam = try Insta360Camera(configJSON: json.map { String(cString: $0) } ?? "{}", host: PluginHostCallbacks(host))
                return Unmanaged.passRetained(cam).toOpaque()
            } catch {
                reportError(error, errorOut)
                return nil
            }
        },
        destroy: { p in
            guard let p else { return }
            camera(p).stop()
            Unmanaged<Insta360Camera>.fromOpaque(p).release()
        },
        live_source: { p, substream, errorOut in
            guard let p else { return nil }
            guard substream == 0 else { reportError(PluginConfigError("no sub-stream"), errorOut); return nil }
            return makeCString(camera(p).liveSource())
        },
        start_push: nil,
        stop_push: nil,
        status: { p in p.map { makeCString(camera($0).statusJSON()) } },
        free_string: freeCString,
        card: cardCameraFunctions,
        control: nvr_control_functions(
            nvr_event: { p, json in
                guard let p, let json else { return }
                camera(p).nvrEvent(json: String(cString: json))
            })))
    return e
}()

@_cdecl("nvr_plugin_entry")
public func nvrPluginEntry() -> UnsafePointer<nvr_plugin_entry_v1> { UnsafePointer(entry) }
