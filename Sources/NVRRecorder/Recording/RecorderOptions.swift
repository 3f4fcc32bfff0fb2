extension Recorder {
    /// What the recorder is told: where to record, where plugins are, how long segments are,
    /// how cards are looked after. The command layer makes it from nvr.toml (NVRCommands'
    /// `Recorder.Options(config:)`); the recorder never reads a config file.
    public struct Options: Sendable {
        public var storageRoot: String
        public var pluginsDir: String
        public var segmentSeconds: Int
        /// List cameras' cards this often (and after every connect).
        public var cardRefreshSeconds: Int
        /// Fill recording gaps from cards automatically, looking back this far.
        public var cardBackfill: Bool
        public var cardBackfillHours: Int
        /// The object detector's runtime and model (loaded when a camera first needs it).
        public var detection = DetectionOptions()

        public init(
            storageRoot: String, pluginsDir: String, segmentSeconds: Int = 60, cardRefreshSeconds: Int = 600,
            cardBackfill: Bool = true, cardBackfillHours: Int = 24
        ) {
            self.storageRoot = storageRoot
            self.pluginsDir = pluginsDir
            self.segmentSeconds = segmentSeconds
            self.cardRefreshSeconds = cardRefreshSeconds
            self.cardBackfill = cardBackfill
            self.cardBackfillHours = cardBackfillHours
        }
    }
}
