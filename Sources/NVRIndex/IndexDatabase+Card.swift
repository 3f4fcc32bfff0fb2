import GRDB
import NVRTime

/// Where a camera-side recording lives: on the camera's memory card (readable, backfilled) or
/// in the vendor's cloud (shown on the timeline only).
public enum CardSource: String, Codable, Sendable { case card, cloud }

/// One video on a camera's memory card, on the NVR's clock.
public struct CardSliceRecord: Codable, Sendable, Equatable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "card_slice"
    public var id: Int64?
    public var cameraID: Int64
    /// The plugin's handle for reading the file (e.g. "100GOPRO/GH010001.MP4").
    public var fileID: String
    public var name: String
    public var start90k: Int64
    public var end90k: Int64
    public var bytes: Int64
    public var seen90k: Int64
    /// False for files listed but kept off the timeline and out of backfill (a 360 camera's
    /// second lens: the same moments as the first).
    public var onTimeline: Bool
    public var source: CardSource
    enum CodingKeys: String, CodingKey {
        case id, cameraID = "camera_id", fileID = "file_id", name, start90k, end90k, bytes, seen90k, onTimeline = "on_timeline", source
    }
    public init(cameraID: Int64, fileID: String, name: String, start90k: Int64, end90k: Int64, bytes: Int64, seen90k: Int64,
                onTimeline: Bool = true, source: CardSource = .card) {
        self.cameraID = cameraID; self.fileID = fileID; self.name = name
        self.start90k = start90k; self.end90k = end90k; self.bytes = bytes; self.seen90k = seen90k
        self.onTimeline = onTimeline
        self.source = source
    }
    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

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
    public func cardSlices(cameraID: Int64, start90k: Int64, end90k: Int64, includeOffTimeline: Bool = false) throws -> [CardSliceRecord] {
        try pool.read { db in
            try CardSliceRecord.fetchAll(db, sql: """
                SELECT * FROM card_slice WHERE camera_id = ? AND start90k < ? AND start90k >= ? AND end90k > ?
                  AND on_timeline >= ?
                ORDER BY start90k, id
                """, arguments: [cameraID, end90k, Time90k.subtract(start90k, 86_400 * 90_000), start90k, includeOffTimeline ? 0 : 1])
        }
    }

    public func setPluginStatus(cameraID: Int64, json: String, at time90k: Int64) throws {
        try pool.write { db in
            try db.execute(sql: """
                INSERT INTO camera_plugin_status (camera_id, status, updated90k) VALUES (?, ?, ?)
                ON CONFLICT (camera_id) DO UPDATE SET status = excluded.status, updated90k = excluded.updated90k
                """, arguments: [cameraID, json, time90k])
        }
    }

    /// The plugin's last status JSON for a camera and when it was written.
    public func pluginStatus(cameraID: Int64) throws -> (json: String, updated90k: Int64)? {
        try pool.read { db in
            try Row.fetchOne(db, sql: "SELECT status, updated90k FROM camera_plugin_status WHERE camera_id = ?", arguments: [cameraID])
                .map { ($0[0], $0[1]) }
        }
    }
}
