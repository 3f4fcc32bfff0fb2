import CNVRPlugin

/// A camera plugin whose instances open a live URL (the host reads it), report status, and
/// stop on destroy: GoPro, Insta360, Tuya. With `cameraEntry` the C entry points are written
/// once here; each plugin library links its own copy of this module, so `cameraFactory` is
/// that plugin's.
public protocol URLCamera: AnyObject {
    func liveSource() throws -> String
    func statusJSON() -> String
    /// Stops threads; no host callback may run after it returns.
    func stop()
}

/// Makes the plugin's camera from its config JSON (set by the plugin before the entry is built).
nonisolated(unsafe) public var cameraFactory: ((String, PluginHostCallbacks) throws -> any URLCamera)?

private func urlCamera(_ p: UnsafeMutableRawPointer) -> (any URLCamera)? {
    Unmanaged<AnyObject>.fromOpaque(p).takeUnretainedValue() as? any URLCamera
}

/// The entry struct of a URLCamera plugin; `card` and `control` as the plugin offers them.
public func cameraEntry(name: String, version: String, description: String, capabilities: UInt64,
                        card: nvr_card_functions = nvr_card_functions(),
                        control: nvr_control_functions = nvr_control_functions()) -> UnsafeMutablePointer<nvr_plugin_entry_v1> {
    let e = UnsafeMutablePointer<nvr_plugin_entry_v1>.allocate(capacity: 1)
    e.initialize(to: nvr_plugin_entry_v1(
        abi_version: NVR_PLUGIN_ABI_VERSION,
        struct_size: UInt32(MemoryLayout<nvr_plugin_entry_v1>.size),
        name: staticCString(name),
        version: staticCString(version),
        description: staticCString(description),
        capabilities: capabilities,
        create: { json, host, errorOut in
            guard let host, let factory = cameraFactory else { reportError(PluginConfigError("no host callbacks"), errorOut); return nil }
            do {
                let cam = try factory(json.map { String(cString: $0) } ?? "{}", PluginHostCallbacks(host))
                return Unmanaged.passRetained(cam as AnyObject).toOpaque()
            } catch {
                reportError(error, errorOut)
                return nil
            }
        },
        destroy: { p in
            guard let p else { return }
            urlCamera(p)?.stop()
            Unmanaged<AnyObject>.fromOpaque(p).release()
        },
        live_source: { p, substream, errorOut in
            guard let p, let cam = urlCamera(p) else { return nil }
            guard substream == 0 else { reportError(PluginConfigError("no sub-stream"), errorOut); return nil }
            do { return makeCString(try cam.liveSource()) } catch {
                reportError(error, errorOut)
                return nil
            }
        },
        start_push: nil,
        stop_push: nil,
        status: { p in p.flatMap(urlCamera).map { makeCString($0.statusJSON()) } },
        free_string: freeCString,
        card: card,
        control: control))
    return e
}
