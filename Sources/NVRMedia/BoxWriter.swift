/// Big-endian byte writer for ISO BMFF boxes; reuses its storage between uses.
public struct BoxWriter: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    public var count: Int { bytes.count }

    public mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    public mutating func u8(_ v: UInt8) { bytes.append(v) }
    public mutating func u16(_ v: UInt16) {
        bytes.append(UInt8(v >> 8))
        bytes.append(UInt8(truncatingIfNeeded: v))
    }
    public mutating func u32(_ v: UInt32) {
        bytes.append(UInt8(truncatingIfNeeded: v >> 24))
        bytes.append(UInt8(truncatingIfNeeded: v >> 16))
        bytes.append(UInt8(truncatingIfNeeded: v >> 8))
        bytes.append(UInt8(truncatingIfNeeded: v))
    }
    public mutating func i32(_ v: Int32) { u32(UInt32(bitPattern: v)) }
    public mutating func u64(_ v: UInt64) {
        u32(UInt32(truncatingIfNeeded: v >> 32))
        u32(UInt32(truncatingIfNeeded: v))
    }
    public mutating func fourcc(_ s: StaticString) {
        s.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }
    public mutating func append(_ data: UnsafeRawBufferPointer) { bytes.append(contentsOf: data) }
    public mutating func append(_ data: [UInt8]) { bytes.append(contentsOf: data) }
    public mutating func zeros(_ n: Int) { for _ in 0..<n { bytes.append(0) } }

    /// Writes a box: size placeholder, type, then the body, then patches the size.
    public mutating func box(_ type: StaticString, _ body: (inout BoxWriter) -> Void) {
        let start = bytes.count
        u32(0)
        fourcc(type)
        body(&self)
        patchU32(at: start, UInt32(bytes.count - start))
    }

    /// Writes a full box (version and flags after the type).
    public mutating func fullBox(_ type: StaticString, version: UInt8, flags: UInt32, _ body: (inout BoxWriter) -> Void)
    {
        box(type) { w in
            w.u32(UInt32(version) << 24 | (flags & 0xFF_FFFF))
            body(&w)
        }
    }

    public mutating func patchU32(at offset: Int, _ v: UInt32) {
        bytes[offset] = UInt8(truncatingIfNeeded: v >> 24)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: v >> 16)
        bytes[offset + 2] = UInt8(truncatingIfNeeded: v >> 8)
        bytes[offset + 3] = UInt8(truncatingIfNeeded: v)
    }
}
