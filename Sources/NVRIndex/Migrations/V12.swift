import GRDB

/// Schema version 12: detection zones. `event.zones` holds the names of the camera's zones the
/// object stood in during the event, as a JSON array (the zones themselves are camera
/// settings, in camera_recording.detect).
enum MigrationV12 {
    static let name = "v12"

    static func migrate(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE event ADD COLUMN zones TEXT")
    }
}
