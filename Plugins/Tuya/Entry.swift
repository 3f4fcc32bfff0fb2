import CNVRPlugin
import PluginSupport

private func camera(_ p: UnsafeMutableRawPointer) -> TuyaCamera { Unmanaged<TuyaCamera>.fromOpaque(p).takeUnretainedValue() }

/// The plugin's static description and C entry points.
nonisolated(unsafe) private let entry: UnsafeMutablePointer<nvr_plugin_entry_v1> = {
    let e = UnsafeMutablePointer<nvr_plugin_entry_v1>.allocate(capacity: 1)
    e.initialize(to: nvr_plugin_entry_v1(
        abi_version: NVR_PLUGIN_ABI_VERSION,
        struct_size: UInt32(MemoryLayout<nvr_plugin_entry_v1>.size),
        name: staticCString("tuya"),
        version: staticCString("0.1.0"),
        description: staticCString("Tuya IPC cameras: live video from a fresh cloud allocation per connection (or a local RTSP URL), motion and doorbell events over the LAN protocol 3.3/3.4, status data points, cloud-storage recordings on the timeline; SD-card playback is only reachable through Tuya's closed P2P SDK and is not offered"),
        capabilities: UInt64(NVR_CAP_LIVE_URL) | UInt64(NVR_CAP_EVENTS) | UInt64(NVR_CAP_CARD_LIST),
        create: { json, host, errorOut in
            guard let host else { reportError(PluginConfigError("no host callbacks"), errorOut); return nil }
            do {
                let cam = try TuyaCamera(configJSON: json.map { String(cString: $0) } ?? "{}", host: PluginHostCallbacks(host))
                return Unmanaged.passRetained(cam).toOpaque()
            } catch {
                reportError(error, errorOut)
                return nil
            }
        },
        destroy: { p in
            guard let p else { return }
            camera(p).stop()
            Unmanaged<TuyaCamera>.fromOpaque(p).release()
        },
        live_source: { p, substream, errorOut in
            guard let p else { return nil }
            guard substream == 0 else { reportError(PluginConfigError("no sub-stream"), errorOut); return nil }
            do { return makeCString(try camera(p).liveSource()) } catch {
                reportError(error, errorOut)
                return nil
            }
        },
        start_push: nil,
        stop_push: nil,
        status: { p in p.map { makeCString(camera($0).statusJSON()) } },
        free_string: freeCString,
        // Lists cloud-storage recordings (source "cloud"); reads nothing.
        card: nvr_card_functions(
            card_list: { p, errorOut in
                guard let p else { return nil }
                do { return makeCString(try camera(p).cardList()) } catch {
                    reportError(error, errorOut)
                    return nil
                }
            },
            card_read: nil),
        control: nvr_control_functions()))
    return e
}()

@_cdecl("nvr_plugin_entry")
public func nvrPluginEntry() -> UnsafePointer<nvr_plugin_entry_v1> { UnsafePointer(entry) }
