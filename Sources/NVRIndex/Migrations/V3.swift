import GRDB

/// Schema version 3: an index that answers "how long is this camera's longest segment" at
/// once. Range queries need that bound: with only `start90k < end`, finding the segments of
/// one day walked every older segment of the camera (half a million rows after a year).
enum MigrationV3 {
    static let name = "v3"

    static func migrate(_ db: Database) throws {
        try db.execute(sql: "CREATE INDEX segment_camera_duration ON segment(camera_id, duration90k)")
    }
}
