import NVRMedia

/// What a plugin instance reports back to the host, on any of the plugin's threads.
public protocol PluginCallbacks: AnyObject, Sendable {
    func pluginLog(level: Int32, message: String)
    func pluginConnectionState(_ state: Int32, reason: String?)
    func pluginEvent(json: String)
    func pluginCardMedia(json: String)
    /// Push mode: the streams of a new connection, video first (already checked and
    /// converted from the plugin's C structures). Non-zero refuses them.
    func pluginBeginStreams(_ streams: [StreamDescription]) -> Int32
    /// Push mode: one packet of stream `stream` (an index into the last `pluginBeginStreams`
    /// array); `data` is borrowed for the call. Non-zero asks the plugin to stop.
    func pluginPacket(_ packet: InputPacket) -> Int32
}
