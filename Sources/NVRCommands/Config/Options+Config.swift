import Logging
import NVRHTTP
import NVRPlayback
import NVRRecorder

extension Recorder.Options {
    /// The recorder's options as nvr.toml sets them.
    public init(config: NVRConfig) {
        self.init(
            storageRoot: config.storageRoot, pluginsDir: config.resolvedPluginsDir,
            segmentSeconds: config.segmentSeconds,
            cardRefreshSeconds: config.cardRefreshSeconds, cardBackfill: config.cardBackfill,
            cardBackfillHours: config.cardBackfillHours)
        detection = config.detect
    }
}

extension Recorder {
    /// A recorder for nvr.toml's settings.
    public convenience init(config: NVRConfig, logger: Logger) throws {
        let storage = StorageLayout(root: config.storageRoot)
        try storage.prepare()
        try self.init(
            options: Options(config: config), index: try config.openIndex(storage, logger: logger), logger: logger)
    }
}

extension HTTPServer.Options {
    /// The HTTP server's options as nvr.toml sets them.
    public init(config: NVRConfig, allowUnauthenticated: Bool) {
        self.init(
            bind: config.httpBind, allowUnauthenticated: allowUnauthenticated, maxViewSeconds: config.maxViewSeconds)
        tlsCert = config.tlsCert
        tlsKey = config.tlsKey
        allowedHosts = config.allowedHosts
        sessionDays = config.sessionDays
        pluginsDir = config.resolvedPluginsDir
        connectionLimits.maxConnectionsPerAddress = config.maxConnectionsPerAddress
    }
}
