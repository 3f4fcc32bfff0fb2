import GRDB

/// Schema version 5: what is on each camera's memory card, and the camera-side status its
/// plugin reports (battery, card), for `nvr camera list` in another process.
enum MigrationV5 {
    static let name = "v5"

    static func migrate(_ db: Database) throws {
        try db.execute(sql: """
            -- One video on a camera's card as the last listing saw it, its span already on the
            -- NVR's clock (design/card.md). Replaced wholesale by each listing.
            CREATE TABLE card_slice (
              id INTEGER PRIMARY KEY,
              camera_id INTEGER NOT NULL REFERENCES camera(id) ON DELETE CASCADE,
              file_id TEXT NOT NULL,
              name TEXT NOT NULL,
              start90k INTEGER NOT NULL,
              end90k INTEGER NOT NULL CHECK (end90k >= start90k),
              bytes INTEGER NOT NULL,
              seen90k INTEGER NOT NULL,
              UNIQUE (camera_id, file_id)
            );
            CREATE INDEX card_slice_camera_start ON card_slice(camera_id, start90k);
            CREATE TABLE camera_plugin_status (
              camera_id INTEGER PRIMARY KEY REFERENCES camera(id) ON DELETE CASCADE,
              status TEXT NOT NULL,
              updated90k INTEGER NOT NULL
            );
            """)
    }
}
