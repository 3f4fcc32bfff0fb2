import CNVRPlugin
import PluginSupport

private func camera(_ p: UnsafeMutableRawPointer) -> GoProCamera { Unmanaged<GoProCamera>.fromOpaque(p).takeUnretainedValue() }

/// The plugin's static description and C entry points.
nonisolated(unsafe) private let entry: UnsafeMutablePointer<nvr_plugin_entry_v1> = {
    let e = UnsafeMutablePointer<nvr_plugin_entry_v1>.allocate(capacity: 1)
    e.initialize(to: nvr_plugin_entry_v1(
        abi_version: NVR_PLUGIN_ABI_VERSION,
        struct_size: UInt32(MemoryLayout<nvr_plugin_entry_v1>.size),
        name: staticCString("gopro"),
        version: staticCString("1.0.0"),
        description: staticCString("GoPro HERO9–13 over the Open GoPro HTTP API: preview or webcam stream (UDP MPEG-TS), state, SD card listing and download"),
        capabilities: UInt64(NVR_CAP_LIVE_URL) | UInt64(NVR_CAP_CARD_LIST) | UInt64(NVR_CAP_CARD_DOWNLOAD),
        create: { json, host, errorOut in
            guard let host else { reportError(PluginConfigError("no host callbacks"), errorOut); return nil }
            do {
                let cam = try GoProCamera(configJSON: json.map { String(cString: $0) } ?? "{}", host: PluginHostCallbacks(host))
                return Unmanaged.passRetained(cam).toOpaque()
            } catch {
                reportError(error, errorOut)
                return nil
            }
        },
        destroy: { p in
            guard let p else { return }
            camera(p).stop()
            Unmanaged<GoProCamera>.fromOpaque(p).release()
        },
        live_source: { p, _, errorOut in
            guard let p else { return nil }
            do { return makeCString(try camera(p).liveSource()) } catch {
                reportError(error, errorOut)
                return nil
            }
        },
        start_push: nil,
        stop_push: nil,
        status: { p in p.map { makeCString(camera($0).statusJSON()) } },
        free_string: freeCString,
        card: cardCameraFunctions,
        control: nvr_control_functions()))
    return e
}()

@_cdecl("nvr_plugin_entry")
public func nvrPluginEntry() -> UnsafePointer<nvr_plugin_entry_v1> { UnsafePointer(entry) }
