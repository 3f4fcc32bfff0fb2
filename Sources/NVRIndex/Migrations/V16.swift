import GRDB

/// Schema version 16: for several recorder nodes sharing one index (design/scale-out.md), the
/// node that recorded each segment (`segment.node`; NULL: the one machine of a single-box NVR)
/// and the node a camera is pinned to (`camera.preferred_node`). A SQLite index has one node:
/// the columns exist so both backends share one record per table, and `nvr db migrate` copies
/// them.
enum MigrationV16 {
    static let name = "v16"

    static func migrate(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE segment ADD COLUMN node TEXT;
            ALTER TABLE camera ADD COLUMN preferred_node TEXT;
            """)
    }
}
