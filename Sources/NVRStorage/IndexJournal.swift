import Foundation
import NVRIndex
import NVRMedia

/// The index writer's rows that the index could not take yet (PostgreSQL unreachable), on disk
/// in the storage root, so that a node killed or stopped during an outage still has them: they
/// are written at its next start, before recovery, which would otherwise remove the files
/// they describe (design/scale-out.md, "Recording through an outage of PostgreSQL").
///
/// An append-only file of records, one per batch: 4 bytes of length and 4 of CRC-32 (both
/// little-endian), then the batch as JSON. A record cut short at the end (a crash while
/// appending) is left out. A whole record that does not check (its CRC, its JSON: a damaged
/// disk, another version) makes the journal *damaged*: what comes before it is read, and the
/// file is set aside for a person (`setAside`), not emptied. An append that fails is cut off
/// again, so the file never holds half a batch that a later one follows.
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
    private var nextNumber = 1
    /// An append failed and could not be cut off again: the file may hold a batch that was not
    /// kept, so nothing more is appended (the writer keeps rows in memory instead), and this
    /// process reads the file only up to `validLength`.
    private var broken = false
    public var isBroken: Bool { lock.withLock { broken } }
    /// How long the file is with only what this process kept in it (nil: not known, as at start).
    private var validLength: Int?

    /// What `read` found.
    public struct Contents {
        public var writes: [RecordingWrite]
        /// Bytes at the end that are not a whole record.
        public var torn: Int
        /// A whole record did not check: the writes after it are not in `writes`.
        public var damaged: Bool
    }

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
            guard !broken else { throw IndexError("the index journal \(path) is not used after a failed write") }
            let created = !FileManager.default.fileExists(atPath: path)
            let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw IndexError("cannot open the index journal \(path): \(errnoText())") }
            defer { close(fd) }
            var st = stat()
            guard fstat(fd, &st) == 0 else { throw IndexError("cannot read the index journal \(path): \(errnoText())") }
            // On any failure the file is cut back to what it held: the batch is then kept in
            // memory by the writer, and must not also be in the file.
            func fail(_ what: String) -> IndexError {
                let error = IndexError("cannot \(what) the index journal \(path): \(errnoText())")
                if ftruncate(fd, st.st_size) != 0 || fdatasync(fd) != 0 { broken = true }
                validLength = Int(st.st_size)
                return error
            }
            var written = 0
            while written < record.count {
                let n = record[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw fail("write") }
                written += n
            }
            guard fdatasync(fd) == 0 else { throw fail("sync") }
            if created { Self.syncFolder(of: path) }
            validLength = Int(st.st_size) + record.count
            writes += batch.count
        }
    }

    /// Every write in the file, in order, up to a record that does not check.
    public func read() throws -> Contents {
        guard let data = FileManager.default.contents(atPath: path) else {
            if !FileManager.default.fileExists(atPath: path) { return Contents(writes: [], torn: 0, damaged: false) }
            throw IndexError("cannot read the index journal \(path)")
        }
        var out: [RecordingWrite] = []
        var at = 0
        return lock.withLock {
            let bytes = [UInt8](validLength.map { data.prefix($0) } ?? data)
            while bytes.count - at >= 8 {
                let length = Int(Self.uint32(bytes, at))
                let crc = Self.uint32(bytes, at + 4)
                guard length <= Self.largestRecord else { return Contents(writes: out, torn: 0, damaged: true) }
                // Cut short at the end: a crash while appending.
                guard bytes.count - at - 8 >= length else { break }
                let payload = bytes[(at + 8)..<(at + 8 + length)]
                var check = CRC32()
                payload.withUnsafeBytes { check.update($0) }
                guard check.value == crc,
                    let stored = try? JSONDecoder().decode([StoredWrite].self, from: Data(payload))
                else { return Contents(writes: out, torn: 0, damaged: true) }
                out += stored.map { load($0) }
                at += 8 + length
            }
            return Contents(writes: out, torn: bytes.count - at, damaged: false)
        }
    }

    /// Empties the file (its rows are in the index) and forgets the numbers given out; removes
    /// it if it cannot be emptied.
    public func clear() throws {
        try lock.withLock {
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            let emptied = fd >= 0 && fsync(fd) == 0
            if fd >= 0 { close(fd) }
            if !emptied {
                guard unlink(path) == 0 || errno == ENOENT else {
                    throw IndexError("cannot empty or remove the index journal \(path): \(errnoText())")
                }
                Self.syncFolder(of: path)
            }
            forget()
        }
    }

    /// Moves a damaged journal aside (`index.journal.damaged-<milliseconds since 1970>`), for a person
    /// to look at; returns where.
    public func setAside() throws -> String {
        try lock.withLock {
            // Milliseconds, and never over another one set aside.
            var aside = path + ".damaged-\(Int64(Date().timeIntervalSince1970 * 1000))"
            while FileManager.default.fileExists(atPath: aside) { aside += "-1" }
            guard rename(path, aside) == 0 else {
                throw IndexError("cannot move the damaged index journal \(path) aside: \(errnoText())")
            }
            Self.syncFolder(of: path)
            forget()
            return aside
        }
    }

    /// Journals set aside as damaged, still next to this one (their rows' files are not files
    /// without rows until a person has looked).
    public var setAsideCopies: [String] {
        let folder = (path as NSString).deletingLastPathComponent
        let prefix = (path as NSString).lastPathComponent + ".damaged-"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { $0.hasPrefix(prefix) }.sorted().map { folder + "/" + $0 }
    }

    private func forget() {
        validLength = 0
        numbers.removeAll()
        refs.removeAll()
        writes = 0
        nextNumber = 1
    }

    /// A file made, removed or renamed is only durable once its folder is synced.
    private static func syncFolder(of path: String) {
        let fd = open((path as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
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
        let n = nextNumber
        nextNumber += 1
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
            nextNumber = max(nextNumber, n + 1)
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
