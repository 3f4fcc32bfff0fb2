import CFFmpeg

/// The CRC-32 of ZIP, gzip and PNG (IEEE 802.3, reflected), computed by libavutil's
/// table-driven code.
public struct CRC32: Sendable {
    private var running: UInt32 = 0xFFFF_FFFF

    public init() {}

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        running = av_crc(Self.table, running, base.assumingMemoryBound(to: UInt8.self), bytes.count)
    }

    public mutating func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }

    public var value: UInt32 { running ^ 0xFFFF_FFFF }

    /// libavutil's static table: built once, read-only after that.
    nonisolated(unsafe) private static let table = av_crc_get_table(AV_CRC_32_IEEE_LE)
}
