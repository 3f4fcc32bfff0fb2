import CFFmpeg

/// One track of an init segment.
public struct TrackInfo: Sendable, Equatable {
    public var trackID: UInt32
    public var timescale: UInt32
    public var stream: StreamDescription
    /// The sample entry box (avc1/hev1/mp4a ...) exactly as in the stsd: kept in the
    /// index so any time range can later be served as one MP4 built from the index.
    public var sampleEntry: [UInt8]
    /// RFC 6381 codec string, e.g. "avc1.64001f" or "mp4a.40.2".
    public var rfc6381: String
}
