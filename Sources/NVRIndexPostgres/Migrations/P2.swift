/// PostgreSQL schema version 2: recorder nodes (design/scale-out.md). As SQLite's v16,
/// `segment.node` and `camera.preferred_node`; and PostgreSQL's own: `node`, one row per node
/// with its heartbeat on the server's clock, where its storage is and the random id written in
/// it (so another node can tell the same storage is mounted there), how many cameras it holds;
/// `camera_lease`, the one node recording each camera until `expires` (server clock) with the
/// fencing token it was given (`lease_token`, never reused): the index refuses a node's writes
/// for a camera once its token is not the lease's.
/// Never edit after release; add a P3 file instead.
enum PostgresMigrationP2 {
    static let name = "p2"

    static let sql = """
        ALTER TABLE segment ADD COLUMN node TEXT;
        CREATE INDEX segment_node_state ON segment(node, state) WHERE state != 'complete';
        ALTER TABLE camera ADD COLUMN preferred_node TEXT;
        CREATE TABLE node (
          name TEXT PRIMARY KEY,
          advertise_url TEXT,
          storage_root TEXT NOT NULL,
          storage_id TEXT NOT NULL,
          started TIMESTAMPTZ NOT NULL,
          heartbeat TIMESTAMPTZ NOT NULL,
          cameras BIGINT NOT NULL DEFAULT 0
        );
        CREATE SEQUENCE lease_token;
        CREATE TABLE camera_lease (
          camera_id BIGINT PRIMARY KEY REFERENCES camera(id) ON DELETE CASCADE,
          node TEXT NOT NULL,
          token BIGINT NOT NULL,
          acquired TIMESTAMPTZ NOT NULL,
          expires TIMESTAMPTZ NOT NULL
        );
        CREATE INDEX camera_lease_node ON camera_lease(node);
        """
}
