import Logging
import NVRRecorder

extension Recorder.Options {
    /// The recorder's options as nvr.toml sets them.
    public init(config: NVRConfig) {
        self.init(storageRoot: config.storageRoot, pluginsDir: config.resolvedPluginsDir, segmentSeconds: config.segmentSeconds,
                  cardRefreshSeconds: config.cardRefreshSeconds, cardBackfill: config.cardBackfill, cardBackfillHours: config.cardBackfillHours)
    }
}

extension Recorder {
    /// A recorder for nvr.toml's settings.
    public convenience init(config: NVRConfig, logger: Logger) throws {
        try self.init(options: Options(config: config), logger: logger)
    }
}
