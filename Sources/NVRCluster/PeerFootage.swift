import Foundation
import Logging
import NVRIndex
import NVRIndexPostgres
import NVRPlayback
import Synchronization

/// Footage of another node whose storage is not mounted here, fetched from that node
/// (`GET /api/node/segments/{id}` at its advertised URL, with the nodes' key) in byte ranges
/// into `<root>/peer-cache/<node>/`, where playback then reads it as its own.
///
/// - A complete segment's copy is used again while its size is the row's; a segment still
///   being written is fetched again when its copy is older than `freshSeconds`.
/// - One fetch per segment at a time (others wait for it), at most `parallel` at once, each
///   within `deadlineSeconds` in all: callers are HTTP requests on the blocking pool, which
///   other requests (logins, `GET /api/node`) need too.
/// - The cache holds at most `budgetBytes`: past it, the least recently used copies go
///   (`prune`, also hourly for copies unused for `keepSeconds`).
public final class PeerFootage: Sendable {
    /// Bytes per request: a reply is held in memory before it is written.
    static let chunk = 4 << 20
    static let folder = "peer-cache"
    static let keepSeconds: Double = 3600
    static let freshSeconds: Double = 2
    static let deadlineSeconds: Double = 60
    static let parallel = 4
    static let budgetBytes: Int64 = 1 << 30

    let index: PostgresIndex
    let cacheRoot: String
    let logger: Logger
    /// The other nodes' advertised URLs, from their rows.
    private let urls = Mutex<[String: String]>([:])
    /// Segments being fetched, and how many fetches run.
    private let flights = Mutex<(segments: Set<Int64>, running: Int)>(([], 0))
    private let landed = NSCondition()

    /// The certificates of nodes reached over `https://`.
    let trust: PeerTrust

    public init(index: PostgresIndex, storage: StorageLayout, trust: PeerTrust = PeerTrust(), logger: Logger) {
        self.index = index
        self.trust = trust
        cacheRoot = storage.root + "/" + Self.folder
        self.logger = logger
    }

    /// Takes the nodes' advertised URLs from their rows.
    func update(_ nodes: [NodeRecord]) {
        urls.withLock { u in
            u = Dictionary(
                nodes.compactMap { n in n.advertiseURL.map { (n.name, $0) } }, uniquingKeysWith: { a, _ in a })
        }
    }

    /// A local copy of `segment`, recorded by `node`.
    public func file(node: String, segment: SegmentRecord) throws -> String {
        guard let id = segment.id else { throw IndexError("a segment without an id") }
        // The path comes from the index; still, it must stay inside the cache.
        let parts = segment.path.split(separator: "/")
        guard !segment.path.hasPrefix("/"), !parts.isEmpty, !parts.contains(".."), !parts.contains("."),
            !segment.path.contains("\0"), !node.isEmpty, !node.contains("/"), !node.contains("\0"), node != "..",
            node != "."
        else { throw IndexError("segment \(id) has a path that leaves the storage root: \(segment.path)") }
        let local = cacheRoot + "/" + node + "/" + segment.path
        let deadline = NodeLeases.monotonic() + Self.deadlineSeconds
        // One fetch of a segment at a time, and a bounded number in all.
        landed.lock()
        while true {
            if let usable = usableCopy(local, segment) {
                landed.unlock()
                return usable
            }
            let free = flights.withLock { f -> Bool in
                guard !f.segments.contains(id), f.running < Self.parallel else { return false }
                f.segments.insert(id)
                f.running += 1
                return true
            }
            if free { break }
            let left = deadline - NodeLeases.monotonic()
            guard left > 0, landed.wait(until: Date(timeIntervalSinceNow: left)) || NodeLeases.monotonic() < deadline
            else {
                landed.unlock()
                throw IndexError("too many fetches from other nodes at once; try again")
            }
        }
        landed.unlock()
        defer {
            flights.withLock {
                $0.segments.remove(id)
                $0.running -= 1
            }
            landed.lock()
            landed.broadcast()
            landed.unlock()
        }
        try fetch(node: node, id: id, segment: segment, to: local, deadline: deadline)
        prune(budgetOnly: true)
        return local
    }

    /// The copy at `local` if it can be used as it is.
    private func usableCopy(_ local: String, _ segment: SegmentRecord) -> String? {
        var info = stat()
        guard stat(local, &info) == 0 else { return nil }
        if segment.state == .complete {
            guard Int64(info.st_size) == segment.bytes else { return nil }
            utimensat(AT_FDCWD, local, nil, 0)  // recently used: pruned last
        } else {
            // Its time is when it was fetched (not touched on use).
            let age = Date().timeIntervalSince1970 - Double(info.st_mtim.tv_sec)
            guard Int64(info.st_size) >= segment.bytes, age < Self.freshSeconds else { return nil }
        }
        return local
    }

    private func fetch(node: String, id: Int64, segment: SegmentRecord, to local: String, deadline: Double) throws {
        guard let base = urls.withLock({ $0[node] }) else {
            throw IndexError("node \(node) has no advertise_url to fetch it from")
        }
        let key = try index.nodeKey()
        let folder = (local as NSString).deletingLastPathComponent
        do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
            throw IndexError("cannot make \(folder): \(error)")
        }
        let part = local + ".part-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw IndexError("cannot create \(part): errno \(errno)") }
        var keep = false
        defer {
            close(fd)
            if !keep { unlink(part) }
        }
        // A complete segment is exactly the row's size; one being written has at least the
        // row's bytes and grows meanwhile: the copy stops at the size the first reply gave.
        var offset: Int64 = 0
        var total: Int64?
        while total.map({ offset < $0 }) ?? true {
            let left = deadline - NodeLeases.monotonic()
            guard left > 0 else { throw IndexError("node \(node) at \(base) was too slow") }
            let want = min(offset + Int64(Self.chunk), total ?? .max) - 1
            guard
                let reply = PeerHTTP.get(
                    base, path: "/api/node/segments/\(id)",
                    headers: ["X-NVR-Node-Key": key, "Range": "bytes=\(offset)-\(want)"], timeout: min(left, 30),
                    limit: Self.chunk, pinned: trust.certificates(node: node))
            else { throw IndexError("node \(node) at \(base) did not answer") }
            switch reply.status {
            case 206:
                guard let range = reply.headers["content-range"].flatMap(Self.contentRange),
                    range.first == offset, range.last - range.first + 1 == Int64(reply.body.count)
                else { throw IndexError("node \(node) sent a byte range that was not asked for") }
                if total == nil {
                    let fits =
                        segment.state == .complete
                        ? range.total == segment.bytes
                        : range.total >= segment.bytes && range.total <= max(segment.bytes, 0) + (256 << 20)
                    guard fits else {
                        throw IndexError("node \(node) offered \(range.total) bytes of a \(segment.bytes)-byte segment")
                    }
                    total = range.total
                }
                guard let total, range.last == min(want, total - 1), range.total >= total else {
                    throw IndexError("node \(node) sent a byte range that was not asked for")
                }
            case 416 where offset == 0 && segment.bytes == 0:
                total = 0  // an empty file
                continue
            default:
                let why = String(decoding: reply.body.prefix(300), as: UTF8.self)
                throw IndexError("node \(node) answered \(reply.status): \(why)")
            }
            try reply.body.withUnsafeBytes { p in
                var done = 0
                while done < p.count {
                    let n = pwrite(fd, p.baseAddress?.advanced(by: done), p.count - done, off_t(offset) + off_t(done))
                    guard n > 0 else { throw IndexError("cannot write \(part): errno \(errno)") }
                    done += n
                }
            }
            offset += Int64(reply.body.count)
        }
        guard rename(part, local) == 0 else { throw IndexError("cannot rename \(part): errno \(errno)") }
        keep = true
    }

    /// Removes the least recently used copies past `budgetBytes`, and (unless `budgetOnly`)
    /// copies unused for `keepSeconds` and pieces of fetches that died.
    public func prune(budgetOnly: Bool = false) {
        let now = Date().timeIntervalSince1970
        var files: [(path: String, used: Double, bytes: Int64)] = []
        let walk = FileManager.default.enumerator(atPath: cacheRoot)
        while let f = walk?.nextObject() as? String {
            let path = cacheRoot + "/" + f
            var info = stat()
            guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            let used = Double(info.st_mtim.tv_sec)
            if !budgetOnly && now - used > Self.keepSeconds {
                unlink(path)
            } else if !f.contains(".part-") {
                files.append((path, used, Int64(info.st_size)))
            }
        }
        var bytes = files.reduce(Int64(0)) { $0 + $1.bytes }
        for f in files.sorted(by: { $0.used < $1.used }) where bytes > Self.budgetBytes {
            unlink(f.path)
            bytes -= f.bytes
        }
    }

    /// `bytes FIRST-LAST/TOTAL`.
    static func contentRange(_ header: String) -> (first: Int64, last: Int64, total: Int64)? {
        guard header.hasPrefix("bytes ") else { return nil }
        let slash = header.dropFirst(6).split(separator: "/", omittingEmptySubsequences: false)
        guard slash.count == 2, let total = Int64(slash[1]), total >= 0 else { return nil }
        let ends = slash[0].split(separator: "-", omittingEmptySubsequences: false)
        guard ends.count == 2, let first = Int64(ends[0]), let last = Int64(ends[1]), first >= 0, last >= first,
            last < total
        else { return nil }
        return (first, last, total)
    }
}
