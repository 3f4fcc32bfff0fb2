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

    func register(on router: Router<NVRContext>) {
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
