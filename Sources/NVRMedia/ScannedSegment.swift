import Glibc

/// What a segment file holds, read back from its boxes: used to recover segments a crash
/// left unfinished, and by integrity checks.
public struct ScannedSegment: Sendable {
    public var initSegment: [UInt8]
    /// Length of the file up to the end of its last complete fragment.
    public var validLength: Int64
    public var fileLength: Int64
    public var fragments: [FragmentInfo]
    /// Samples per track in file order, and each track's first decode time.
    public var samples: [[Sample]]
    public var firstDecodeTimes: [UInt64]
    public var trackIDs: [UInt32]
    public var timescales: [UInt32]
}
