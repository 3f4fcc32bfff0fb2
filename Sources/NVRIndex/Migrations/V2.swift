import GRDB

/// Schema version 2: retention policies, server settings, and an event flag on segments
/// (set by event recording; retention deletes continuous footage before event footage).
enum MigrationV2 {
    static let name = "v2"

    static func migrate(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE segment ADD COLUMN has_event INTEGER NOT NULL DEFAULT 0;
            CREATE INDEX segment_retention ON segment(camera_id, has_event, start90k);
            -- Per-camera limits; NULL = no limit of that kind.
            CREATE TABLE camera_retention (
              camera_id INTEGER PRIMARY KEY REFERENCES camera(id) ON DELETE CASCADE,
              continuous_days REAL,
              event_days REAL,
              max_bytes INTEGER
            );
            -- Storage-wide settings (retention.root_max_bytes, retention.min_free_percent).
            CREATE TABLE setting (
              key TEXT PRIMARY KEY,
              value TEXT NOT NULL
            );
            """)
    }
}
