import Foundation
import Glibc
import NVRMedia

/// A ZIP file of stored (uncompressed) entries whose bytes are mostly ranges of segment
/// files: several cameras' MP4s in one download, sent as it is read, its size known before
/// the first byte (so a browser shows the download's progress).
///
/// Each entry's CRC-32 is only known once its bytes have been read, so entries carry a data
/// descriptor (general purpose flag bit 3) after their data, and the central directory comes
/// last, as APPNOTE 6.3.10 (4.3.9, 4.4.4) has it. Entries of 4 GiB or more, and offsets past
/// 4 GiB, use the ZIP64 fields (4.5.3, 4.3.14–4.3.15). MP4 is already compressed: storing
/// costs nothing in size and lets the size be known up front.
public struct ZipArchive: Sendable {
    public struct Entry: Sendable {
        public var name: String
        public var parts: [VirtualMP4.Part]
        /// Seconds since 1970 (UTC); written as the DOS time of the server's time zone.
        public var modified: Int64
        public var size: Int64 { parts.reduce(0) { $0 + $1.length } }

        public init(name: String, parts: [VirtualMP4.Part], modified: Int64) {
            self.name = name
            self.parts = parts
            self.modified = modified
        }
    }

    public let entries: [Entry]
    /// Where each entry's local header starts.
    let offsets: [Int64]
    /// Entry i has sizes of 4 GiB or more (or ZIP64 is forced).
    let bigEntry: [Bool]
    /// Entry i's local header starts at or past 4 GiB (or ZIP64 is forced).
    let farEntry: [Bool]
    let centralOffset: Int64
    let centralSize: Int64
    let zip64End: Bool
    /// The whole file's length.
    public let size: Int64

    /// `forceZip64` writes every ZIP64 field even when nothing needs it (tests check that
    /// readers take those fields without writing gigabytes).
    public init(entries: [Entry], forceZip64: Bool = false) throws {
        var seen = Set<String>()
        for e in entries {
            guard !e.name.isEmpty, e.name.utf8.count <= 1024, !e.name.hasPrefix("/"), !e.name.contains("\\"),
                !e.name.split(separator: "/").contains(".."), seen.insert(e.name).inserted
            else { throw ExportError("cannot put '\(e.name.prefix(64))' in a zip (empty, unsafe or repeated name)") }
        }
        self.entries = entries
        let max32 = Int64(UInt32.max)
        var offsets: [Int64] = []
        var big: [Bool] = []
        var far: [Bool] = []
        var at: Int64 = 0
        var central: Int64 = 0
        for e in entries {
            let n = Int64(e.name.utf8.count)
            let isBig = forceZip64 || e.size >= max32
            let isFar = forceZip64 || at >= max32
            offsets.append(at)
            big.append(isBig)
            far.append(isFar)
            at += 30 + n + (isBig ? 20 : 0) + e.size + (isBig ? 24 : 16)
            central += 46 + n + Self.centralExtraLength(big: isBig, far: isFar)
        }
        self.offsets = offsets
        bigEntry = big
        farEntry = far
        centralOffset = at
        centralSize = central
        zip64End =
            forceZip64 || big.contains(true) || far.contains(true) || entries.count >= 0xFFFF || at >= max32
            || central >= max32
        size = at + central + (zip64End ? 56 + 20 : 0) + 22
    }

    static func centralExtraLength(big: Bool, far: Bool) -> Int64 {
        let fields = (big ? 2 : 0) + (far ? 1 : 0)
        return fields == 0 ? 0 : 4 + 8 * Int64(fields)
    }

    /// The archive's bytes in order, in pieces of at most `chunk` bytes from files. Sendable
    /// and a value: a server can read the next piece on another thread.
    public func reader(chunk: Int = 1 << 20) -> Reader { Reader(archive: self, chunk: max(chunk, 4096)) }

    public struct Reader: Sendable {
        let archive: ZipArchive
        let chunk: Int
        /// The entry being sent (entries.count: the central directory and end records).
        var entry = 0
        /// Within the entry: -1 the local header, 0..<parts.count its data, parts.count its descriptor.
        var part = -1
        var partOffset: Int64 = 0
        var crc = CRC32()
        var crcs: [UInt32] = []
        var done = false
        public private(set) var sent: Int64 = 0

        /// The next bytes of the archive, or nil after the last. Reads files with pread; a file
        /// shorter than its part is an error (retention deleted it meanwhile).
        public mutating func next() throws -> [UInt8]? {
            guard !done else { return nil }
            let out = try produce()
            sent += Int64(out.count)
            return out
        }

        private mutating func produce() throws -> [UInt8] {
            guard entry < archive.entries.count else {
                done = true
                return archive.trailer(crcs: crcs)
            }
            let e = archive.entries[entry]
            if part == -1 {
                part = 0
                partOffset = 0
                crc = CRC32()
                return archive.localHeader(entry)
            }
            if part == e.parts.count {
                let value = crc.value
                crcs.append(value)
                entry += 1
                part = -1
                return archive.descriptor(entry - 1, crc: value)
            }
            switch e.parts[part] {
            case .bytes(let b):
                part += 1
                crc.update(b)
                return b
            case .file(let path, let offset, let length):
                let n = Int(min(Int64(chunk), length - partOffset))
                let bytes = try Self.read(path, at: offset + partOffset, count: n)
                crc.update(bytes)
                partOffset += Int64(n)
                if partOffset >= length {
                    part += 1
                    partOffset = 0
                }
                return bytes
            }
        }

        static func read(_ path: String, at offset: Int64, count: Int) throws -> [UInt8] {
            var out = [UInt8](repeating: 0, count: count)
            try out.withUnsafeMutableBytes { try FileRange.read(path, at: offset, into: $0) }
            return out
        }
    }

    /// Writes the whole archive to `path`, calling `progress(written, total)` after each piece.
    public func write(to path: String, progress: (Int64, Int64) -> Void = { _, _ in }) throws {
        let out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard out >= 0 else { throw MediaError.posix(.write, "cannot create \(path)", errno) }
        defer { close(out) }
        var r = reader()
        while let bytes = try r.next() {
            try bytes.withUnsafeBytes { try FileRange.write(out, $0, path: path) }
            progress(r.sent, size)
        }
    }

    // MARK: Records (APPNOTE 4.3)

    /// Bit 3: sizes and CRC follow the data. Bit 11: the name is UTF-8.
    static let flags: UInt16 = 0x0008 | 0x0800

    func localHeader(_ i: Int) -> [UInt8] {
        let e = entries[i]
        var w = LittleEndianWriter()
        w.u32(0x0403_4b50)
        w.u16(bigEntry[i] ? 45 : 20)
        w.u16(Self.flags)
        w.u16(0)  // stored
        let (time, date) = Self.dosTime(e.modified)
        w.u16(time)
        w.u16(date)
        // CRC and sizes: in the descriptor (4.4.4). A ZIP64 entry says so here too, with its
        // sizes as 0xFFFFFFFF and a ZIP64 extra field of zeros (4.3.9.2, 4.5.3), so readers
        // that go by local headers know its descriptor holds 8-byte sizes.
        w.u32(0)
        w.u32(bigEntry[i] ? 0xFFFF_FFFF : 0)
        w.u32(bigEntry[i] ? 0xFFFF_FFFF : 0)
        w.u16(UInt16(e.name.utf8.count))
        w.u16(bigEntry[i] ? 20 : 0)
        w.bytes(Array(e.name.utf8))
        if bigEntry[i] {
            w.u16(0x0001)
            w.u16(16)
            w.u64(0)
            w.u64(0)
        }
        return w.out
    }

    func descriptor(_ i: Int, crc: UInt32) -> [UInt8] {
        var w = LittleEndianWriter()
        w.u32(0x0807_4b50)
        w.u32(crc)
        let n = entries[i].size
        if bigEntry[i] {
            w.u64(UInt64(n))
            w.u64(UInt64(n))
        } else {
            w.u32(UInt32(n))
            w.u32(UInt32(n))
        }
        return w.out
    }

    func trailer(crcs: [UInt32]) -> [UInt8] {
        var w = LittleEndianWriter()
        let max32: UInt32 = 0xFFFF_FFFF
        for (i, e) in entries.enumerated() {
            let n = e.size
            w.u32(0x0201_4b50)
            w.u16(3 << 8 | 45)  // made by: Unix, APPNOTE 4.5
            w.u16(bigEntry[i] || farEntry[i] ? 45 : 20)
            w.u16(Self.flags)
            w.u16(0)
            let (time, date) = Self.dosTime(e.modified)
            w.u16(time)
            w.u16(date)
            w.u32(i < crcs.count ? crcs[i] : 0)
            w.u32(bigEntry[i] ? max32 : UInt32(n))
            w.u32(bigEntry[i] ? max32 : UInt32(n))
            w.u16(UInt16(e.name.utf8.count))
            w.u16(UInt16(Self.centralExtraLength(big: bigEntry[i], far: farEntry[i])))
            w.u16(0)  // comment
            w.u16(0)  // disk
            w.u16(0)  // internal attributes
            w.u32(0o100644 << 16)  // a regular file, rw-r--r--
            w.u32(farEntry[i] ? max32 : UInt32(offsets[i]))
            w.bytes(Array(e.name.utf8))
            if bigEntry[i] || farEntry[i] {
                // ZIP64 extended information: only the fields set to 0xFFFFFFFF above, in order.
                w.u16(0x0001)
                w.u16(UInt16(Self.centralExtraLength(big: bigEntry[i], far: farEntry[i]) - 4))
                if bigEntry[i] {
                    w.u64(UInt64(n))
                    w.u64(UInt64(n))
                }
                if farEntry[i] { w.u64(UInt64(offsets[i])) }
            }
        }
        let count = entries.count
        if zip64End {
            let recordAt = centralOffset + centralSize
            w.u32(0x0606_4b50)
            w.u64(44)  // the record's size after this field
            w.u16(3 << 8 | 45)
            w.u16(45)
            w.u32(0)
            w.u32(0)
            w.u64(UInt64(count))
            w.u64(UInt64(count))
            w.u64(UInt64(centralSize))
            w.u64(UInt64(centralOffset))
            w.u32(0x0706_4b50)  // locator
            w.u32(0)
            w.u64(UInt64(recordAt))
            w.u32(1)
        }
        w.u32(0x0605_4b50)
        w.u16(0)
        w.u16(0)
        w.u16(zip64End ? 0xFFFF : UInt16(count))
        w.u16(zip64End ? 0xFFFF : UInt16(count))
        w.u32(zip64End ? max32 : UInt32(centralSize))
        w.u32(zip64End ? max32 : UInt32(centralOffset))
        w.u16(0)
        return w.out
    }

    /// MS-DOS time and date (2-second steps, 1980–2107) of the server's time zone.
    static func dosTime(_ seconds: Int64) -> (time: UInt16, date: UInt16) {
        var t = time_t(clamping: seconds)
        var tm = Glibc.tm()
        guard localtime_r(&t, &tm) != nil else { return (0, 0x21) }
        let year = Int(tm.tm_year) + 1900
        guard year >= 1980 else { return (0, 0x21) }  // 1980-01-01
        guard year <= 2107 else { return (0xBF7D, 0xFF9F) }  // 2107-12-31 23:59:58
        let time = UInt16(tm.tm_hour) << 11 | UInt16(tm.tm_min) << 5 | UInt16(tm.tm_sec / 2)
        let date = UInt16(year - 1980) << 9 | UInt16(tm.tm_mon + 1) << 5 | UInt16(tm.tm_mday)
        return (time, date)
    }
}

/// Little-endian fields, as ZIP has them.
struct LittleEndianWriter {
    var out: [UInt8] = []
    mutating func u16(_ v: UInt16) { out += [UInt8(v & 0xFF), UInt8(v >> 8)] }
    mutating func u32(_ v: UInt32) { for k in 0..<4 { out.append(UInt8(truncatingIfNeeded: v >> (8 * k))) } }
    mutating func u64(_ v: UInt64) { for k in 0..<8 { out.append(UInt8(truncatingIfNeeded: v >> (8 * k))) } }
    mutating func bytes(_ b: [UInt8]) { out += b }
}
