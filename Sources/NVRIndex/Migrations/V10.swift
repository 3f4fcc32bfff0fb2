import GRDB

/// Schema version 10: repairs databases migrated by earlier editions of v1, v4 and v6. Those
/// three migrations were edited after they had run on some databases (a mistake not to be
/// repeated: migrations are frozen once committed, and `MigrationTests` pins the schema each
/// one makes). A database that ran the first edition lacks what was added later:
/// - v1: the `camera_state` table (the last connection state, for the CLI);
/// - v4: the `event_length` and `event_open` indexes (range queries name `event_open`, and
///   fail with "no such index" without it);
/// - v6: `card_slice.source` (card or vendor cloud).
/// Each is made here only if missing, so a database from today's migrations is unchanged.
enum MigrationV10 {
    static let name = "v10"

    static func migrate(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS camera_state (
              camera_id INTEGER PRIMARY KEY REFERENCES camera(id) ON DELETE CASCADE,
              state TEXT NOT NULL,
              reason TEXT,
              since90k INTEGER NOT NULL
            );
            CREATE INDEX IF NOT EXISTS event_length ON event(end90k - start90k);
            CREATE INDEX IF NOT EXISTS event_open ON event(start90k) WHERE end90k IS NULL;
            """)
        let columns = try db.columns(in: "card_slice").map(\.name)
        if !columns.contains("source") {
            try db.execute(sql: """
                ALTER TABLE card_slice ADD COLUMN source TEXT NOT NULL DEFAULT 'card' CHECK (source IN ('card', 'cloud'));
                """)
        }
    }
}
