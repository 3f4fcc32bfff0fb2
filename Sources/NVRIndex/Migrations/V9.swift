import GRDB

/// Schema version 9: what was deleted, so it stays deleted. A camera's card still holds
/// footage the NVR deleted (by a user, or by retention); card backfill must not bring it back
/// at the next sync. One row per deleted span per camera; spans that touch are merged, so
/// retention eating the oldest minute every pass extends one row rather than adding one.
enum MigrationV9 {
    static let name = "v9"

    static func migrate(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE deleted_range (
              id INTEGER PRIMARY KEY,
              camera_id INTEGER NOT NULL REFERENCES camera(id) ON DELETE CASCADE,
              start90k INTEGER NOT NULL,
              end90k INTEGER NOT NULL CHECK (end90k > start90k),
              -- 'user' (a range deleted by someone) or 'retention'; the newest reason of a merged span.
              reason TEXT NOT NULL,
              deleted90k INTEGER NOT NULL
            );
            CREATE INDEX deleted_range_camera ON deleted_range(camera_id, start90k);
            """)
    }
}
