import CNVRPlugin
import PluginSupport

/// The plugin's static description and C entry points.
nonisolated(unsafe) private let entry: UnsafeMutablePointer<nvr_plugin_entry_v1> = {
    let e = UnsafeMutablePointer<nvr_plugin_entry_v1>.allocate(capacity: 1)
    e.initialize(
        to: nvr_plugin_entry_v1(
            abi_version: NVR_PLUGIN_ABI_VERSION,
            struct_size: UInt32(MemoryLayout<nvr_plugin_entry_v1>.size),
            name: staticCString("rtsp"),
            version: staticCString("1.0.0"),
            description: staticCString(
                "Generic IP camera over RTSP/RTSPS (Basic or Digest auth, TCP or UDP, optional sub-stream)"),
            capabilities: UInt64(NVR_CAP_LIVE_URL) | UInt64(NVR_CAP_SUBSTREAM) | UInt64(NVR_CAP_TALK),
            create: { json, _, errorOut in
                do {
                    let cam = try RTSPCamera(configJSON: json.map { String(cString: $0) } ?? "{}")
                    return Unmanaged.passRetained(cam).toOpaque()
                } catch {
                    reportError(error, errorOut)
                    return nil
                }
            },
            destroy: { p in if let p { Unmanaged<RTSPCamera>.fromOpaque(p).release() } },
            live_source: { p, sub, _ in
                guard let p else { return nil }
                return makeCString(
                    Unmanaged<RTSPCamera>.fromOpaque(p).takeUnretainedValue().liveSource(substream: sub != 0))
            },
            start_push: nil,
            stop_push: nil,
            status: nil,
            free_string: freeCString,
            card: nvr_card_functions(),
            control: nvr_control_functions(),
            discovery: nvr_discovery_functions(), ptz: nvr_ptz_functions(), talk: nvr_talk_info()))
    return e
}()

@_cdecl("nvr_plugin_entry")
public func nvrPluginEntry() -> UnsafePointer<nvr_plugin_entry_v1> { UnsafePointer(entry) }
