/// One sample (frame) of a track, as written into an MP4 fragment.
public struct Sample: Sendable, Equatable {
    /// Duration in the track's timescale.
    public var duration: UInt32
    public var size: UInt32
    public var isKey: Bool
    /// Presentation minus decode time, in the track's timescale (B-frames).
    public var compositionOffset: Int32

    public init(duration: UInt32, size: UInt32, isKey: Bool, compositionOffset: Int32 = 0) {
        self.duration = duration
        self.size = size
        self.isKey = isKey
        self.compositionOffset = compositionOffset
    }
}
