import Glibc

/// Where one fragment's samples landed in a segment file.
public struct FragmentInfo: Sendable, Equatable {
    /// File offset of the first byte of the mdat payload.
    public var dataOffset: Int64
    /// Samples per track, in track order; their data lies back to back from dataOffset.
    public var sampleCounts: [Int]

    public init(dataOffset: Int64, sampleCounts: [Int]) {
        self.dataOffset = dataOffset
        self.sampleCounts = sampleCounts
    }
}
