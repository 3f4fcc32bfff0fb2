import CNVRPlugin

/// A camera plugin whose instances open a live URL (the host reads it), report status, and
/// stop on destroy: GoPro, Insta360, Tuya. With `cameraEntry` the C entry points are written
/// once here; each plugin passes its own `create` (a C function that calls `createCamera`
/// with its camera type), so nothing depends on which copy of this module a library links.
public protocol URLCamera: AnyObject {
    func liveSource() throws -> String
    /// The sub-stream's source too, for cameras that have one (NVR_CAP_SUBSTREAM).
    func liveSource(substream: Bool) throws -> String
    func statusJSON() -> String
    /// Stops threads; no host callback may run after it returns.
    func stop()
}

extension URLCamera {
    /// Most have no sub-stream.
    public func liveSource(substream: Bool) throws -> String {
        guard !substream else { throw PluginConfigError("no sub-stream") }
        return try liveSource()
    }
}

/// The ABI's `create`: a C function, so it cannot carry the camera type; each plugin writes
/// `{ json, host, error in createCamera(json, host, error) { try MyCamera(configJSON: $0, host: $1) } }`.
public typealias CreateFunction =
    @convention(c) (
        UnsafePointer<CChar>?, UnsafePointer<nvr_host_v1>?,
        UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
    ) -> UnsafeMutableRawPointer?

/// Makes a plugin's camera from its config JSON for the ABI's `create`: the camera, retained
/// for the host, or nil with the error written out.
public func createCamera(
    _ json: UnsafePointer<CChar>?, _ host: UnsafePointer<nvr_host_v1>?,
    _ errorOut: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
    _ make: (String, PluginHostCallbacks) throws -> any URLCamera
) -> UnsafeMutableRawPointer? {
    guard let host else {
        reportError(PluginConfigError("no host callbacks"), errorOut)
        return nil
    }
    do {
        let cam = try make(json.map { String(cString: $0) } ?? "{}", PluginHostCallbacks(host))
        return Unmanaged.passRetained(cam as AnyObject).toOpaque()
    } catch {
        reportError(error, errorOut)
        return nil
    }
}

private func urlCamera(_ p: UnsafeMutableRawPointer) -> (any URLCamera)? {
    Unmanaged<AnyObject>.fromOpaque(p).takeUnretainedValue() as? any URLCamera
}

/// A camera that pans, tilts or zooms (NVR_CAP_PTZ): one JSON request, one JSON answer
/// (nvr_plugin.h, nvr_ptz_functions).
public protocol PTZCamera: AnyObject {
    func ptz(request: String) throws -> String
}

/// The ABI's `ptz` for a URLCamera that is also a PTZCamera.
public let ptzFunctions = nvr_ptz_functions(ptz: { p, json, errorOut in
    guard let p, let cam = urlCamera(p) as? any PTZCamera else {
        reportError(PluginConfigError("this camera does not pan, tilt or zoom"), errorOut)
        return nil
    }
    do { return makeCString(try cam.ptz(request: json.map { String(cString: $0) } ?? "{}")) } catch {
        reportError(error, errorOut)
        return nil
    }
})

/// The entry struct of a URLCamera plugin; `card` and `control` as the plugin offers them.
public func cameraEntry(
    name: String, version: String, description: String, capabilities: UInt64, create: CreateFunction,
    card: nvr_card_functions = nvr_card_functions(),
    control: nvr_control_functions = nvr_control_functions(),
    discovery: nvr_discovery_functions = nvr_discovery_functions(),
    ptz: nvr_ptz_functions = nvr_ptz_functions(),
    whyNoTalk: String? = nil
) -> UnsafeMutablePointer<nvr_plugin_entry_v1> {
    let e = UnsafeMutablePointer<nvr_plugin_entry_v1>.allocate(capacity: 1)
    e.initialize(
        to: nvr_plugin_entry_v1(
            abi_version: NVR_PLUGIN_ABI_VERSION,
            struct_size: UInt32(MemoryLayout<nvr_plugin_entry_v1>.size),
            name: staticCString(name),
            version: staticCString(version),
            description: staticCString(description),
            capabilities: capabilities,
            create: create,
            destroy: { p in
                guard let p else { return }
                urlCamera(p)?.stop()
                Unmanaged<AnyObject>.fromOpaque(p).release()
            },
            live_source: { p, substream, errorOut in
                guard let p, let cam = urlCamera(p) else { return nil }
                do { return makeCString(try cam.liveSource(substream: substream != 0)) } catch {
                    reportError(error, errorOut)
                    return nil
                }
            },
            start_push: nil,
            stop_push: nil,
            status: { p in p.flatMap(urlCamera).map { makeCString($0.statusJSON()) } },
            free_string: freeCString,
            card: card,
            control: control,
            discovery: discovery,
            ptz: ptz,
            talk: nvr_talk_info(why_not: whyNoTalk.map(staticCString))))
    return e
}
