extension Segmenter {
    public struct Settings: Sendable {
        public var segmentSeconds: Int
        /// Longest fragment before it is written even without a key frame (crash loss bound).
        public var maxFragment90k: Int64 = 90_000
        /// Largest forward timestamp step that still counts as continuous.
        public var maxFrameGap90k: Int64 = 5 * 90_000
        /// How often a segment being written has its row's duration and size refreshed.
        public var progressEvery90k: Int64 = 5 * 90_000
        /// Where the footage comes from: "live" (the camera's stream) or "card" (backfilled).
        public var source = "live"
        /// Most bytes buffered for one fragment before it is written even mid-second (a
        /// camera whose timestamps barely advance must not fill memory).
        public var maxFragmentBytes = 16 << 20
        /// A segment this many times `segmentSeconds` long without a key frame to cut at ends
        /// the run (the next starts at the next key frame): its frame index stays bounded.
        public var maxSegmentFactor: Int64 = 10
        public init(segmentSeconds: Int) { self.segmentSeconds = segmentSeconds }
    }
}
