import Foundation
import HTTPTypes
import Hummingbird
import NVRAccess
import NVRCluster
import NVRIndex
import NVRIndexPostgres
import NVRPlayback

/// The recorder nodes sharing this server's PostgreSQL index (admin; design/scale-out.md): as
/// `nvr nodes` lists them. A SQLite index has none.
struct NodeRoutes: APIRoutes {
    let index: any IndexStore
    let storage: StorageLayout

    struct NodesJSON: Encodable {
        /// sqlite or postgresql.
        var index: String
        /// This server's node name, if it is one.
        var node: String?
        var nodes: [NodeSummary]
    }

    /// GET /api/node: this node's name, whether it reaches PostgreSQL now, and the cameras it
    /// holds; what the nodes ask each other when they lose PostgreSQL (design/scale-out.md).
    /// With the nodes' key (no user: a node cut off from PostgreSQL cannot check one), which
    /// the node has read from the index at its start.
    struct NodeJSON: Encodable {
        var node: String
        /// reachable or unreachable.
        var index: String
        /// Ids of the cameras whose leases it holds.
        var cameras: [Int64]
    }

    func register(on router: Router<NVRContext>) {
        router.get("/api/node") { r, _ in
            guard let pg = index as? PostgresIndex, let node = pg.node else {
                throw APIError.notFound("this server is not a recorder node")
            }
            try await checkNodeKey(r, pg)
            let answers = try await offload { pg.answersNow() }
            return try JSON.response(
                NodeJSON(
                    node: node, index: answers ? "reachable" : "unreachable",
                    cameras: (pg.fence.current ?? [:]).keys.sorted()))
        }
        router.get("/api/node/segments/{id}") { r, c in try await segmentFile(r, c) }
        router.get("/api/nodes") { _, c in
            try admin(c)
            return try await offload { [index] in
                guard let pg = index as? PostgresIndex else {
                    return try JSON.response(NodesJSON(index: "sqlite", node: nil, nodes: []))
                }
                return try JSON.response(
                    NodesJSON(index: "postgresql", node: pg.node, nodes: try NodeSummary.list(pg, me: pg.node)))
            }
        }
    }

    /// GET /api/node/segments/{id}: one of this node's segment files, whole or a byte range,
    /// for another node that plays it and does not have this node's storage mounted. Only with
    /// the nodes' key (`X-NVR-Node-Key`), compared in constant time.
    func segmentFile(_ r: Request, _ c: NVRContext) async throws -> Response {
        guard let pg = index as? PostgresIndex, let me = pg.node else {
            throw APIError.notFound("this server is not a recorder node")
        }
        try await checkNodeKey(r, pg)
        guard let id = c.parameters.get("id").flatMap({ Int64($0) }), id > 0 else {
            throw APIError.badRequest("the segment id must be a positive integer")
        }
        guard let seg = try await offload({ try pg.segment(id: id) }), seg.node == me else {
            throw APIError.notFound("node \(me) has no segment \(id)")
        }
        let path = storage.absolute(seg.path)
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw APIError.notFound("the file of segment \(id) is not on node \(me)")
        }
        let size = Int64(info.st_size)
        var headers: HTTPFields = [.contentType: "video/mp4", .acceptRanges: "bytes"]
        var status = HTTPResponse.Status.ok
        var window = ByteRange(first: 0, last: size - 1)
        switch ByteRange.parse(r.headers[.range], size: size) {
        case .whole: break
        case .unsatisfiable:
            var e = APIError(
                .rangeNotSatisfiable, "range_not_satisfiable", "the range is outside the \(size)-byte file")
            e.headers = [.contentRange: "bytes */\(size)", .acceptRanges: "bytes"]
            throw e
        case .range(let b):
            status = .partialContent
            window = b
            headers[.contentRange] = "bytes \(b.first)-\(b.last)/\(size)"
        }
        headers[.contentLength] = String(max(window.count, 0))
        if r.method == .head || size == 0 { return Response(status: status, headers: headers) }
        let bytes = window
        return Response(
            status: status, headers: headers,
            body: ResponseBody(contentLength: Int(bytes.count)) { writer in
                var pos = bytes.first
                while pos <= bytes.last {
                    let n = Int(min(Int64(1 << 20), bytes.last + 1 - pos))
                    let at = pos
                    try await writer.write(try await offload { try PlaybackRoutes.read(path, at: at, count: n) })
                    pos += Int64(n)
                }
                try await writer.finish(nil)
            })
    }

    /// 401 unless the request carries the nodes' key.
    func checkNodeKey(_ r: Request, _ pg: PostgresIndex) async throws {
        let given = r.headers[AccessMiddleware.nodeKeyHeader] ?? ""
        let key = try await offload { try pg.nodeKey() }
        guard Secrets.equal(given, key) else {
            throw APIError(.unauthorized, "unauthorized", "this needs the nodes' key (X-NVR-Node-Key)")
        }
    }
}
