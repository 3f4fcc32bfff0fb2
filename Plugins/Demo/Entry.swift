import CNVRPlugin
import PluginSupport

/// The plugin's static description and C entry points.
nonisolated(unsafe) private let entry: UnsafeMutablePointer<nvr_plugin_entry_v1> = {
    let e = UnsafeMutablePointer<nvr_plugin_entry_v1>.allocate(capacity: 1)
    e.initialize(
        to: nvr_plugin_entry_v1(
            abi_version: NVR_PLUGIN_ABI_VERSION,
            struct_size: UInt32(MemoryLayout<nvr_plugin_entry_v1>.size),
            name: staticCString("demo"),
            version: staticCString("1.0.0"),
            description: staticCString(
                "Synthetic camera: moving test pattern with a burned-in clock, H.264 encoded in-process; optional event timer"
            ),
            capabilities: UInt64(NVR_CAP_LIVE_PUSH) | UInt64(NVR_CAP_EVENTS),
            create: { json, host, errorOut in
                guard let host else {
                    reportError(PluginConfigError("no host callbacks"), errorOut)
                    return nil
                }
                do {
                    let cam = try DemoCamera(
                        configJSON: json.map { String(cString: $0) } ?? "{}", host: PluginHostCallbacks(host))
                    return Unmanaged.passRetained(cam).toOpaque()
                } catch {
                    reportError(error, errorOut)
                    return nil
                }
            },
            destroy: { p in if let p { Unmanaged<DemoCamera>.fromOpaque(p).release() } },
            live_source: nil,
            start_push: { p, errorOut in
                guard let p else { return -1 }
                do {
                    try Unmanaged<DemoCamera>.fromOpaque(p).takeUnretainedValue().start()
                    return 0
                } catch {
                    reportError(error, errorOut)
                    return -1
                }
            },
            stop_push: { p in if let p { Unmanaged<DemoCamera>.fromOpaque(p).takeUnretainedValue().stop() } },
            status: { p in
                guard let p else { return nil }
                let c = Unmanaged<DemoCamera>.fromOpaque(p).takeUnretainedValue()
                return makeCString(
                    jsonText(["width": c.width, "height": c.height, "fps": c.fps, "bitrate": c.bitRate]))
            },
            free_string: freeCString,
            card: nvr_card_functions(),
            control: nvr_control_functions(),
            discovery: nvr_discovery_functions(), ptz: nvr_ptz_functions(),
            talk: nvr_talk_info(why_not: staticCString("a synthetic camera has no speaker"))))
    return e
}()

@_cdecl("nvr_plugin_entry")
public func nvrPluginEntry() -> UnsafePointer<nvr_plugin_entry_v1> { UnsafePointer(entry) }
