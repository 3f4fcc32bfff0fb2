import GRDB

/// Schema version 7: run ids from a counter. `MAX(run_id) + 1` gave two writers that asked
/// at the same time (two cameras, a card backfill, `nvr card sync` in another process) the
/// same id; an UPDATE … RETURNING on one row hands out each id once.
enum MigrationV7 {
    static let name = "v7"

    static func migrate(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE run_counter (
              id INTEGER PRIMARY KEY CHECK (id = 1),
              next INTEGER NOT NULL
            );
            INSERT INTO run_counter (id, next) SELECT 1, COALESCE(MAX(run_id), 0) + 1 FROM segment;
            """)
    }
}
