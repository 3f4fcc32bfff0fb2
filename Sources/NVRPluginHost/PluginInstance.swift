import CNVRPlugin
import Foundation
import NVRMedia
import Synchronization

/// One camera's plugin instance. Owns the host callback table the plugin holds on to.
/// `@unchecked Sendable`: `instance` is only passed back to the plugin, whose ABI requires
/// its functions to be callable from any thread; `host` is immutable after init.
public final class PluginInstance: @unchecked Sendable {
    public let plugin: LoadedPlugin
    private let instance: UnsafeMutableRawPointer
    private let host: UnsafeMutablePointer<nvr_host_v1>
    private let callbacks: Unmanaged<CallbackBox>

    public init(plugin: LoadedPlugin, configJSON: String, callbacks target: any PluginCallbacks) throws {
        self.plugin = plugin
        let retained = Unmanaged.passRetained(CallbackBox(target))
        host = .allocate(capacity: 1)
        host.initialize(
            to: nvr_host_v1(
                struct_size: UInt32(MemoryLayout<nvr_host_v1>.size), host_ctx: retained.toOpaque(),
                log: { ctx, level, msg in
                    callbackTarget(ctx)?.pluginLog(level: level, message: msg.map { String(cString: $0) } ?? "")
                },
                connection_state: { ctx, state, reason in
                    callbackTarget(ctx)?.pluginConnectionState(state, reason: reason.map { String(cString: $0) })
                },
                event: { ctx, json in callbackTarget(ctx)?.pluginEvent(json: json.map { String(cString: $0) } ?? "{}")
                },
                card_media: { ctx, json in
                    callbackTarget(ctx)?.pluginCardMedia(json: json.map { String(cString: $0) } ?? "{}")
                },
                begin_streams: { ctx, streams, count in
                    guard let ctx, let streams, count > 0 else { return -1 }
                    let box = Unmanaged<CallbackBox>.fromOpaque(ctx).takeUnretainedValue()
                    switch PluginStreams.convert(UnsafeRawPointer(streams), count: Int(count)) {
                    case .failure(let why):
                        box.target.pluginLog(
                            level: Int32(NVR_LOG_ERROR.rawValue), message: "begin_streams refused: \(why)")
                        return -1
                    case .success(let converted):
                        if !converted.dropped.isEmpty {
                            box.target.pluginLog(
                                level: Int32(NVR_LOG_WARNING.rawValue),
                                message: "not recorded: " + converted.dropped.joined(separator: "; "))
                        }
                        box.streams.withLock { $0 = converted }
                        return box.target.pluginBeginStreams(converted.descriptions)
                    }
                },
                push_packet: { ctx, packet in
                    guard let ctx, let packet else { return -1 }
                    let box = Unmanaged<CallbackBox>.fromOpaque(ctx).takeUnretainedValue()
                    let streams = box.streams.withLock { $0 }  // a copy of two small arrays: no allocation
                    // A stream we do not record.
                    guard let p = streams.packet(UnsafeRawPointer(packet)) else { return 0 }
                    return box.target.pluginPacket(p)
                }))
        var error: UnsafeMutablePointer<CChar>?
        guard let made = plugin.entry.pointee.create(configJSON, host, &error) else {
            let message = error.map { String(cString: $0) } ?? "plugin refused the config"
            if let error { plugin.entry.pointee.free_string(error) }
            host.deinitialize(count: 1)
            host.deallocate()
            retained.release()
            throw PluginError("\(plugin.name): \(message)")
        }
        instance = made
        callbacks = retained
    }

    deinit {
        plugin.entry.pointee.destroy(instance)
        host.deinitialize(count: 1)
        host.deallocate()
        callbacks.release()
    }

    private func takeString(_ p: UnsafeMutablePointer<CChar>?) -> String? {
        guard let p else { return nil }
        defer { plugin.entry.pointee.free_string(p) }
        return String(cString: p)
    }

    /// The input to open for live video (fresh for every connection).
    public func liveSource(substream: Bool = false) throws -> LiveSource {
        guard plugin.has(UInt64(NVR_CAP_LIVE_URL)), let fn = plugin.entry.pointee.live_source else {
            throw PluginError("\(plugin.name): plugin offers no live URL")
        }
        var error: UnsafeMutablePointer<CChar>?
        guard let json = takeString(fn(instance, substream ? 1 : 0, &error)) else {
            // Config was checked at create: failing now is the camera's side (the C ABI's
            // error is a message, not a kind).
            throw PluginError("\(plugin.name): \(takeString(error) ?? "no live source")", kind: .transient)
        }
        do {
            return try JSONDecoder().decode(LiveSource.self, from: Data(json.utf8))
        } catch {
            throw PluginError("\(plugin.name): live source is not valid JSON: \(json)")
        }
    }

    public func startPush() throws {
        guard plugin.has(UInt64(NVR_CAP_LIVE_PUSH)), let fn = plugin.entry.pointee.start_push else {
            throw PluginError("\(plugin.name): plugin offers no pushed video")
        }
        var error: UnsafeMutablePointer<CChar>?
        if fn(instance, &error) != 0 {
            throw PluginError("\(plugin.name): \(takeString(error) ?? "could not start")", kind: .transient)
        }
    }

    public func stopPush() { plugin.entry.pointee.stop_push?(instance) }

    /// The plugin's status object as JSON, if it has one.
    public func status() -> String? { plugin.entry.pointee.status.flatMap { takeString($0(instance)) } }

    /// True when the plugin wants to hear about the NVR's events (to act on the camera).
    public var wantsEvents: Bool { plugin.has(UInt64(NVR_CAP_CONTROL)) && plugin.controlFunctions?.nvr_event != nil }

    /// Tells the plugin an NVR event started or ended (nvr_plugin.h, nvr_event); returns at once.
    public func notifyEvent(json: String) {
        guard wantsEvents, let fn = plugin.controlFunctions?.nvr_event else { return }
        fn(instance, json)
    }

    /// Sends one PTZ request (nvr_plugin.h, nvr_ptz_functions) and returns the plugin's JSON
    /// answer; blocks while the camera answers. Throws `.unsupported` when the plugin has no PTZ.
    public func ptz(request json: String) throws -> String {
        guard plugin.steers, let fn = plugin.ptzFunctions?.ptz else {
            throw PluginError("\(plugin.name): plugin cannot pan, tilt or zoom", kind: .unsupported)
        }
        var error: UnsafeMutablePointer<CChar>?
        guard let answer = takeString(fn(instance, json, &error)) else {
            throw PluginError("\(plugin.name): \(takeString(error) ?? "PTZ request failed")", kind: .transient)
        }
        return answer
    }

    /// True when the plugin can list and read its camera's memory card.
    /// True when the plugin can list camera-side recordings (card or cloud), even if it
    /// cannot read them.
    public var offersCardList: Bool {
        plugin.has(UInt64(NVR_CAP_CARD_LIST)) && plugin.cardFunctions?.card_list != nil
    }

    public var offersCard: Bool {
        plugin.has(UInt64(NVR_CAP_CARD_LIST)) && plugin.has(UInt64(NVR_CAP_CARD_DOWNLOAD))
            && plugin.cardFunctions?.card_list != nil && plugin.cardFunctions?.card_read != nil
    }

    /// The card's media list as the plugin's JSON (see nvr_plugin.h, card_list).
    public func cardList() throws -> String {
        guard offersCardList, let fn = plugin.cardFunctions?.card_list else {
            throw PluginError("\(plugin.name): plugin cannot list a memory card")
        }
        var error: UnsafeMutablePointer<CChar>?
        guard let json = takeString(fn(instance, &error)) else {
            throw PluginError("\(plugin.name): \(takeString(error) ?? "card listing failed")")
        }
        return json
    }

    /// Streams bytes [offset, offset + length) of card file `id` (length -1: to the end) to
    /// `sink`, which returns false to cancel. Returns false when cancelled.
    public func cardRead(id: String, offset: Int64, length: Int64, sink: (UnsafeRawBufferPointer) -> Bool) throws
        -> Bool
    {
        guard offersCard, let fn = plugin.cardFunctions?.card_read else {
            throw PluginError("\(plugin.name): plugin cannot read a memory card", kind: .unsupported)
        }
        return try withoutActuallyEscaping(sink) { sink in
            var box = CardSinkBox(sink: sink)
            var error: UnsafeMutablePointer<CChar>?
            let rc = withUnsafeMutablePointer(to: &box) { boxPointer in
                fn(
                    instance, id, offset, length,
                    { ctx, data, size in
                        guard let ctx else { return 1 }
                        let box = ctx.assumingMemoryBound(to: CardSinkBox.self)
                        return box.pointee.sink(UnsafeRawBufferPointer(start: data, count: size)) ? 0 : 1
                    }, boxPointer, &error)
            }
            switch rc {
            case 0: return true
            case 1: return false
            default: throw PluginError("\(plugin.name): reading \(id) failed: \(takeString(error) ?? "unknown error")")
            }
        }
    }
}

/// What card_read's sink_ctx points at during one call.
private struct CardSinkBox {
    let sink: (UnsafeRawBufferPointer) -> Bool
}

/// What host_ctx points at: a concrete box, so callbacks need no dynamic cast per packet.
/// `@unchecked Sendable`: `target` is Sendable and immutable, `streams` is behind its Mutex.
private final class CallbackBox: @unchecked Sendable {
    let target: any PluginCallbacks
    /// Push mode: the streams announced last and the plugin's indices → ours.
    let streams = Mutex(PluginStreams())
    init(_ target: any PluginCallbacks) { self.target = target }
}

/// The callbacks object behind a host_ctx (retained by its PluginInstance).
private func callbackTarget(_ ctx: UnsafeMutableRawPointer?) -> (any PluginCallbacks)? {
    guard let ctx else { return nil }
    return Unmanaged<CallbackBox>.fromOpaque(ctx).takeUnretainedValue().target
}
