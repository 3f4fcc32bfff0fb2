import GRDB

/// Schema version 11: object detection.
/// - `event.source` may be 'detection' (an object the detector tracked; `type` is its label),
///   and `event.box` holds where it was at its best snapshot, as JSON [x, y, width, height]
///   normalised to the picture. SQLite cannot change a CHECK constraint, so the table is made
///   anew with its rows and indexes (GRDB runs migrations with foreign keys checked at the end:
///   protected_clip.event_id keeps pointing at the same ids).
/// - `camera_recording.detect`: the camera's detection settings as JSON (DetectSettings).
enum MigrationV11 {
    static let name = "v11"

    static func migrate(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE event_v11 (
              id INTEGER PRIMARY KEY,
              camera_id INTEGER NOT NULL REFERENCES camera(id) ON DELETE CASCADE,
              start90k INTEGER NOT NULL,
              end90k INTEGER,
              type TEXT NOT NULL,
              source TEXT NOT NULL CHECK (source IN ('plugin', 'motion', 'detection')),
              score REAL,
              snapshot90k INTEGER,
              pre_roll90k INTEGER NOT NULL DEFAULT 0,
              post_roll90k INTEGER NOT NULL DEFAULT 0,
              box TEXT
            );
            INSERT INTO event_v11 (id, camera_id, start90k, end90k, type, source, score, snapshot90k, pre_roll90k, post_roll90k)
              SELECT id, camera_id, start90k, end90k, type, source, score, snapshot90k, pre_roll90k, post_roll90k FROM event;
            DROP TABLE event;
            ALTER TABLE event_v11 RENAME TO event;
            CREATE INDEX event_camera_start ON event(camera_id, start90k);
            CREATE INDEX event_length ON event(end90k - start90k);
            CREATE INDEX event_open ON event(start90k) WHERE end90k IS NULL;
            CREATE INDEX event_start ON event(start90k);
            ALTER TABLE camera_recording ADD COLUMN detect TEXT NOT NULL DEFAULT '{}';
            """)
    }
}
