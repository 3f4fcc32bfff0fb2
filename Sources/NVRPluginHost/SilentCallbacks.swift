import NVRMedia

/// Callbacks for instances made only to validate or probe: they ignore everything.
public final class SilentCallbacks: PluginCallbacks, Sendable {
    public init() {}
    public func pluginLog(level: Int32, message: String) {}
    public func pluginConnectionState(_ state: Int32, reason: String?) {}
    public func pluginEvent(json: String) {}
    public func pluginCardMedia(json: String) {}
    public func pluginBeginStreams(_ streams: [StreamDescription]) -> Int32 { 0 }
    public func pluginPacket(_ packet: InputPacket) -> Int32 { 0 }
}
