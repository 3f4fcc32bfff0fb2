import Foundation
import NVRIndex
import NVRMedia

/// The index writer's rows that the index could not take yet (PostgreSQL unreachable), on disk
/// in the storage root, so that a node killed or stopped during an outage still has them: they
/// are written at its next start, before recovery, which would otherwise remove the files
/// they describe (design/scale-out.md, "Recording through an outage of PostgreSQL").
///
/// An append-only file of records, one per batch: 4 bytes of length and 4 of CRC-32 (both
/// little-endian), then the batch as JSON. A record cut short by a crash, or one whose CRC does
/// not match, ends the journal: the batches before it are read, it and what follows are not.
///
/// A row the batch names that has no id yet (`PendingRowID` not published) is written as a
/// number, the same for every write that names it until the journal is cleared: read back in
/// the same process, the number gives the very `PendingRowID` the recorder holds (so its id is
/// published when the rows are written); read at the next start, a fresh one.
///
/// Thread-safe; every call does file I/O, so it is only for the index writer's thread (and a
/// start-up before cameras record), never for a camera's.
public final class IndexJournal: @unchecked Sendable {
    // @unchecked Sendable: everything mutable is behind `lock`.
    public let path: String
    private let lock = NSLock()
    private var numbers: [ObjectIdentifier: Int] = [:]
    private var refs: [Int: PendingRowID] = [:]
    private var writes = 0

    /// Records larger than this are taken for garbage (a batch of one commit is far smaller).
    static let largestRecord = 256 << 20

    public init(path: String) {
        self.path = path
    }

    /// Writes appended since the journal was last cleared (by this process).
    public var count: Int { lock.withLock { writes } }

    /// Whether the file holds anything (from this process or an earlier one).
    public var isEmpty: Bool {
        var st = stat()
        return stat(path, &st) != 0 || st.st_size == 0
    }

    /// Appends one batch and syncs it to disk before returning.
    public func append(_ batch: [RecordingWrite]) throws {
        try lock.withLock {
            let stored = batch.map { store($0) }
            let payload = Array(try JSONEncoder().encode(stored))
            var crc = CRC32()
            crc.update(payload)
            var record: [UInt8] = []
            record.reserveCapacity(payload.count + 8)
            withUnsafeBytes(of: UInt32(payload.count).littleEndian) { record += $0 }
            withUnsafeBytes(of: crc.value.littleEndian) { record += $0 }
            record += payload
            let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw IndexError("cannot open the index journal \(path): \(errnoText())") }
            defer { close(fd) }
            var written = 0
            while written < record.count {
                let n = record[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw IndexError("cannot write the index journal \(path): \(errnoText())") }
                written += n
            }
            guard fdatasync(fd) == 0 else { throw IndexError("cannot sync the index journal \(path): \(errnoText())") }
            writes += batch.count
        }
    }

    /// Every write in the file, in order. `torn` is how many bytes at its end were not a whole
    /// record (a crash while appending) or not one this version reads.
    public func read() throws -> (writes: [RecordingWrite], torn: Int) {
        guard let data = FileManager.default.contents(atPath: path) else {
            if !FileManager.default.fileExists(atPath: path) { return ([], 0) }
            throw IndexError("cannot read the index journal \(path)")
        }
        let bytes = [UInt8](data)
        var out: [RecordingWrite] = []
        var at = 0
        return lock.withLock {
            while bytes.count - at >= 8 {
                let length = Int(Self.uint32(bytes, at))
                let crc = Self.uint32(bytes, at + 4)
                guard length <= Self.largestRecord, bytes.count - at - 8 >= length else { break }
                let payload = bytes[(at + 8)..<(at + 8 + length)]
                var check = CRC32()
                payload.withUnsafeBytes { check.update($0) }
                // A record whose CRC matches but which does not decode (written by another
                // version) ends the journal like a torn one: the caller says how much was left.
                guard check.value == crc,
                    let stored = try? JSONDecoder().decode([StoredWrite].self, from: Data(payload))
                else { break }
                out += stored.map { load($0) }
                at += 8 + length
            }
            return (out, bytes.count - at)
        }
    }

    /// Empties the file (its rows are in the index) and forgets the numbers given out.
    public func clear() throws {
        try lock.withLock {
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw IndexError("cannot empty the index journal \(path): \(errnoText())") }
            defer { close(fd) }
            guard fsync(fd) == 0 else { throw IndexError("cannot sync the index journal \(path): \(errnoText())") }
            numbers.removeAll()
            refs.removeAll()
            writes = 0
        }
    }

    private static func uint32(_ b: [UInt8], _ at: Int) -> UInt32 {
        UInt32(b[at]) | UInt32(b[at + 1]) << 8 | UInt32(b[at + 2]) << 16 | UInt32(b[at + 3]) << 24
    }

    private func errnoText() -> String { String(cString: strerror(errno)) }

    // MARK: - Writes as stored

    /// A row named by a write: its id, or the journal's number for a row without one yet.
    enum StoredRef: Codable, Equatable {
        case id(Int64)
        case pending(Int)
    }

    /// `RecordingWrite` with `StoredRef`s instead of `PendingRowID`s.
    enum StoredWrite: Codable {
        case insertSampleEntry(SampleEntryRecord, StoredRef)
        case insertSegment(SegmentRecord, StoredRef, entries: [StoredRef])
        case segmentProgress(
            StoredRef, start90k: Int64, duration90k: Int64, bytes: Int64, frames: Int, keyFrames: Int)
        case completeSegment(StoredRef, SegmentRecord, SegmentFramesRecord, entries: [StoredRef])
        case removeSegment(StoredRef)
        case markEvent(StoredRef)
        case markEventSegments(cameraID: Int64, start90k: Int64, end90k: Int64)
        case saveEvent(EventRecord, StoredRef)
        case cameraState(CameraStateRecord)
    }

    private func store(_ ref: PendingRowID) -> StoredRef {
        if let id = ref.value { return .id(id) }
        let key = ObjectIdentifier(ref)
        if let n = numbers[key] { return .pending(n) }
        let n = refs.count + 1
        numbers[key] = n
        refs[n] = ref
        return .pending(n)
    }

    private func load(_ ref: StoredRef) -> PendingRowID {
        switch ref {
        case .id(let id): return PendingRowID(id)
        case .pending(let n):
            if let known = refs[n] { return known }
            let made = PendingRowID()
            refs[n] = made
            numbers[ObjectIdentifier(made)] = n
            return made
        }
    }

    private func store(_ w: RecordingWrite) -> StoredWrite {
        switch w {
        case .insertSampleEntry(let e, let r): return .insertSampleEntry(e, store(r))
        case .insertSegment(let row, let r, let entries):
            return .insertSegment(row, store(r), entries: entries.map(store))
        case .segmentProgress(let r, let start, let duration, let bytes, let frames, let keyFrames):
            return .segmentProgress(
                store(r), start90k: start, duration90k: duration, bytes: bytes, frames: frames, keyFrames: keyFrames)
        case .completeSegment(let r, let row, let frames, let entries):
            return .completeSegment(store(r), row, frames, entries: entries.map(store))
        case .removeSegment(let r): return .removeSegment(store(r))
        case .markEvent(let r): return .markEvent(store(r))
        case .markEventSegments(let camera, let start, let end):
            return .markEventSegments(cameraID: camera, start90k: start, end90k: end)
        case .saveEvent(let e, let r): return .saveEvent(e, store(r))
        case .cameraState(let s): return .cameraState(s)
        }
    }

    private func load(_ w: StoredWrite) -> RecordingWrite {
        switch w {
        case .insertSampleEntry(let e, let r): return .insertSampleEntry(e, load(r))
        case .insertSegment(let row, let r, let entries):
            return .insertSegment(row, load(r), entries: entries.map(load))
        case .segmentProgress(let r, let start, let duration, let bytes, let frames, let keyFrames):
            return .segmentProgress(
                load(r), start90k: start, duration90k: duration, bytes: bytes, frames: frames, keyFrames: keyFrames)
        case .completeSegment(let r, let row, let frames, let entries):
            return .completeSegment(load(r), row, frames, entries: entries.map(load))
        case .removeSegment(let r): return .removeSegment(load(r))
        case .markEvent(let r): return .markEvent(load(r))
        case .markEventSegments(let camera, let start, let end):
            return .markEventSegments(cameraID: camera, start90k: start, end90k: end)
        case .saveEvent(let e, let r): return .saveEvent(e, load(r))
        case .cameraState(let s): return .cameraState(s)
        }
    }
}
