/// A top-level or child box found while walking ISO BMFF bytes.
public struct BoxHeader: Sendable, Equatable {
    public var type: String
    /// Offset of the box's first byte (its size field).
    public var offset: Int
    /// Size of the whole box, header included.
    public var size: Int
    public var headerSize: Int
    public var bodyOffset: Int { offset + headerSize }
    public var end: Int { offset + size }
}
