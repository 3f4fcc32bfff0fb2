import Foundation
import Logging
import NVRIndex
import NVRIndexPostgres
import NVRPlayback
import Synchronization

/// Footage of another node whose storage is not mounted here, fetched from that node
/// (`GET /api/node/segments/{id}` at its advertised URL, with the nodes' key) in byte ranges
/// into `<root>/peer-cache/<node>/`, where playback then reads it as its own. A complete
/// segment's copy is kept and used again while its size is the row's; a segment still being
/// written is fetched again each time. Copies unused for an hour are removed (`prune`).
public final class PeerFootage: Sendable {
    /// Bytes per request: a reply is held in memory before it is written.
    static let chunk = 4 << 20
    static let folder = "peer-cache"
    /// Copies unused this long are removed.
    static let keepSeconds: Double = 3600

    let index: PostgresIndex
    let cacheRoot: String
    let logger: Logger
    /// The other nodes' advertised URLs, from their rows.
    private let urls = Mutex<[String: String]>([:])

    public init(index: PostgresIndex, storage: StorageLayout, logger: Logger) {
        self.index = index
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
            !node.contains("/"), node != "..", node != "."
        else { throw IndexError("segment \(id) has a path that leaves the storage root: \(segment.path)") }
        let local = cacheRoot + "/" + node + "/" + segment.path
        if segment.state == .complete, Self.size(of: local) == segment.bytes {
            Self.touch(local)
            return local
        }
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
        var offset = 0
        var total: Int?
        while total.map({ offset < $0 }) ?? true {
            let last = offset + Self.chunk - 1
            guard
                let reply = PeerHTTP.get(
                    base, path: "/api/node/segments/\(id)",
                    headers: ["X-NVR-Node-Key": key, "Range": "bytes=\(offset)-\(last)"], timeout: 30,
                    limit: Self.chunk)
            else { throw IndexError("node \(node) at \(base) did not answer") }
            switch reply.status {
            case 206:
                guard let range = reply.headers["content-range"].flatMap(Self.contentRange),
                    range.first == offset, range.last - range.first + 1 == reply.body.count,
                    total == nil || total == range.total
                else { throw IndexError("node \(node) sent a byte range that was not asked for") }
                // A segment being written grows; not by more than this between two rows.
                guard Int64(range.total) <= max(segment.bytes, 0) + (256 << 20) else {
                    throw IndexError("node \(node) offered \(range.total) bytes of a \(segment.bytes)-byte segment")
                }
                total = range.total
            case 200 where offset == 0:
                total = reply.body.count
            case 416 where offset == 0:
                total = 0  // an empty file
            default:
                let why = String(decoding: reply.body.prefix(300), as: UTF8.self)
                throw IndexError("node \(node) answered \(reply.status): \(why)")
            }
            guard !reply.body.isEmpty || total == offset else { throw IndexError("node \(node) sent nothing") }
            try reply.body.withUnsafeBytes { p in
                var done = 0
                while done < p.count {
                    let n = pwrite(fd, p.baseAddress?.advanced(by: done), p.count - done, off_t(offset + done))
                    guard n > 0 else { throw IndexError("cannot write \(part): errno \(errno)") }
                    done += n
                }
            }
            offset += reply.body.count
        }
        guard rename(part, local) == 0 else { throw IndexError("cannot rename \(part): errno \(errno)") }
        keep = true
        return local
    }

    /// Removes copies unused for `keepSeconds` (and pieces of fetches that died).
    public func prune() {
        let files = FileManager.default.enumerator(atPath: cacheRoot)
        let now = Date().timeIntervalSince1970
        while let f = files?.nextObject() as? String {
            let path = cacheRoot + "/" + f
            var info = stat()
            guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            if now - Double(info.st_mtim.tv_sec) > Self.keepSeconds { unlink(path) }
        }
    }

    /// `bytes FIRST-LAST/TOTAL`.
    static func contentRange(_ header: String) -> (first: Int, last: Int, total: Int)? {
        guard header.hasPrefix("bytes ") else { return nil }
        let spec = header.dropFirst(6)
        let slash = spec.split(separator: "/")
        guard slash.count == 2, let total = Int(slash[1]), total >= 0 else { return nil }
        let ends = slash[0].split(separator: "-")
        guard ends.count == 2, let first = Int(ends[0]), let last = Int(ends[1]), first >= 0, last >= first,
            last < total
        else { return nil }
        return (first, last, total)
    }

    static func size(of path: String) -> Int64? {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : nil
    }

    static func touch(_ path: String) { utimensat(AT_FDCWD, path, nil, 0) }
}
