import Hummingbird
import NVRCluster
import NVRIndex
import NVRIndexPostgres

/// The recorder nodes sharing this server's PostgreSQL index (admin; design/scale-out.md): as
/// `nvr nodes` lists them. A SQLite index has none.
struct NodeRoutes: APIRoutes {
    let index: any IndexStore

    struct NodesJSON: Encodable {
        /// sqlite or postgresql.
        var index: String
        /// This server's node name, if it is one.
        var node: String?
        var nodes: [NodeSummary]
    }

    /// GET /api/node: this node's name and whether it reaches PostgreSQL now. Public, because
    /// nodes ask each other when they lose PostgreSQL (no node credential exists yet): it tells
    /// only that, and a false answer can at worst make a cut-off node record on into files whose
    /// rows the index refuses later (design/scale-out.md).
    struct NodeJSON: Encodable {
        var node: String
        /// reachable or unreachable.
        var index: String
    }

    func register(on router: Router<NVRContext>) {
        router.get("/api/node") { _, _ in
            guard let pg = index as? PostgresIndex, let node = pg.node else {
                throw APIError.notFound("this server is not a recorder node")
            }
            let answers = try await offload { pg.answersNow(within: 1) }
            return try JSON.response(NodeJSON(node: node, index: answers ? "reachable" : "unreachable"))
        }
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
}
