import NVRIndex

/// A stretch of recording with no gap, of one kind from one source, merged from consecutive
/// segments: what `/timeline`, `/days` and `nvr recordings` show.
public struct TimelineSlice: Sendable, Equatable {
    public enum Kind: String, Sendable, Codable { case continuous, event }
    /// disk: recorded by the NVR; card: from the camera's memory card; cloud: the vendor's cloud.
    public enum Source: String, Sendable, Codable { case disk, card, cloud }
    public var start90k: Int64
    public var end90k: Int64
    public var kind: Kind
    public var source: Source
    public var segments: Int
    public var bytes: Int64
    /// True for footage only on the camera's memory card or in the vendor's cloud (not
    /// downloaded: not playable here).
    public var onCameraOnly = false
    public var duration90k: Int64 { end90k - start90k }
}
