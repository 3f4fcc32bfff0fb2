import GRDB

/// Schema version 4: events, and each camera's recording settings (mode, weekly schedule,
/// pre/post-roll, motion detection).
enum MigrationV4 {
    static let name = "v4"

    static func migrate(_ db: Database) throws {
        try db.execute(sql: """
            -- Something happened: motion seen by the NVR, or an event a camera reported.
            -- end90k is NULL while the event is in progress. pre/post-roll are the camera's
            -- settings when the event began: its clip is [start − pre, end + post].
            CREATE TABLE event (
              id INTEGER PRIMARY KEY,
              camera_id INTEGER NOT NULL REFERENCES camera(id) ON DELETE CASCADE,
              start90k INTEGER NOT NULL,
              end90k INTEGER,
              type TEXT NOT NULL,
              source TEXT NOT NULL CHECK (source IN ('plugin', 'motion')),
              score REAL,
              snapshot90k INTEGER,
              pre_roll90k INTEGER NOT NULL DEFAULT 0,
              post_roll90k INTEGER NOT NULL DEFAULT 0
            );
            CREATE INDEX event_camera_start ON event(camera_id, start90k);
            CREATE INDEX event_start ON event(start90k);
            -- The longest ended event bounds range queries from below (as segment durations do);
            -- events in progress are few and found on their own.
            CREATE INDEX event_length ON event(end90k - start90k);
            CREATE INDEX event_open ON event(start90k) WHERE end90k IS NULL;
            -- How a camera records; no row = continuous, no schedule, 5 s / 10 s, motion auto.
            CREATE TABLE camera_recording (
              camera_id INTEGER PRIMARY KEY REFERENCES camera(id) ON DELETE CASCADE,
              mode TEXT NOT NULL DEFAULT 'continuous' CHECK (mode IN ('continuous', 'events', 'off')),
              schedule TEXT,
              tz TEXT,
              pre_roll90k INTEGER NOT NULL DEFAULT 450000,
              post_roll90k INTEGER NOT NULL DEFAULT 900000,
              motion TEXT NOT NULL DEFAULT '{}'
            );
            """)
    }
}
