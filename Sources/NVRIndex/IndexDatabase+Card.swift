import GRDB
import NVRTime

extension IndexDatabase {
    /// Replaces a camera's card slices with a fresh listing (files gone from the card go).
    public func replaceCardSlices(cameraID: Int64, with slices: [CardSliceRecord]) throws {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM card_slice WHERE camera_id = ?", arguments: [cameraID])
            for var s in slices { try s.insert(db) }
        }
    }

    /// Card slices overlapping [start, end), by start; only those on the timeline unless
    /// `includeOffTimeline`. A card file lasts at most hours, so "overlapping" is bounded
    /// below by a day.
    public func cardSlices(cameraID: Int64, start90k: Int64, end90k: Int64, includeOffTimeline: Bool) throws
        -> [CardSliceRecord]
    {
        try pool.read { db in
            try CardSliceRecord.fetchAll(
                db,
                sql: """
                    SELECT * FROM card_slice WHERE camera_id = ? AND start90k < ? AND start90k >= ? AND end90k > ?
                      AND on_timeline >= ?
                    ORDER BY start90k, id
                    """,
                arguments: [
                    cameraID, end90k, Time90k.subtract(start90k, 86_400 * 90_000), start90k, includeOffTimeline ? 0 : 1,
                ])
        }
    }

    public func setPluginStatus(cameraID: Int64, json: String, at time90k: Int64) throws {
        try pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO camera_plugin_status (camera_id, status, updated90k) VALUES (?, ?, ?)
                    ON CONFLICT (camera_id) DO UPDATE SET status = excluded.status, updated90k = excluded.updated90k
                    """, arguments: [cameraID, json, time90k])
        }
    }

    /// The plugin's last status JSON for a camera and when it was written.
    public func pluginStatus(cameraID: Int64) throws -> (json: String, updated90k: Int64)? {
        try pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT status, updated90k FROM camera_plugin_status WHERE camera_id = ?",
                arguments: [cameraID]
            )
            .map { ($0[0], $0[1]) }
        }
    }
}
