import Foundation
import GRDB

extension IndexDatabase {
    public func retention(cameraID: Int64) throws -> CameraRetention? {
        try pool.read { try CameraRetention.fetchOne($0, key: cameraID) }
    }

    public func setRetention(_ r: CameraRetention) throws { try pool.write { try r.save($0) } }

    public func setting(_ key: String) throws -> String? {
        try pool.read { try String.fetchOne($0, sql: "SELECT value FROM setting WHERE key = ?", arguments: [key]) }
    }

    public func setSetting(_ key: String, _ value: String?) throws {
        try pool.write { try Self.setSetting(key, value, in: $0) }
    }

    public func saveRetention(settings: [(key: String, value: String?)], cameras: [CameraRetention]) throws {
        try pool.write { db in
            for s in settings { try Self.setSetting(s.key, s.value, in: db) }
            for r in cameras { try r.save(db) }
        }
    }

    private static func setSetting(_ key: String, _ value: String?, in db: Database) throws {
        if let value {
            try db.execute(
                sql:
                    "INSERT INTO setting(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                arguments: [key, value])
        } else {
            try db.execute(sql: "DELETE FROM setting WHERE key = ?", arguments: [key])
        }
    }

    /// Complete segments in deletion order: continuous before event footage, oldest first;
    /// never footage inside a clip marked "keep".
    /// `cameraID` nil = every camera. `limit` bounds the batch.
    public func deletionCandidates(cameraID: Int64?, olderThan end90k: Int64, hasEvent: Bool?, limit: Int)
        throws -> [SegmentRecord]
    {
        try pool.read { db in
            // Footage in a clip marked "keep" is never a candidate.
            var sql =
                "SELECT * FROM segment WHERE state = 'complete' AND start90k + duration90k <= ? AND \(Self.unprotectedSegment)"
            var args: [any DatabaseValueConvertible] = [end90k]
            if let cameraID {
                sql += " AND camera_id = ?"
                args.append(cameraID)
            }
            if let hasEvent {
                sql += " AND has_event = ?"
                args.append(hasEvent)
            }
            sql += " ORDER BY has_event, start90k LIMIT ?"
            args.append(limit)
            return try SegmentRecord.fetchAll(db, sql: sql, arguments: StatementArguments(args))
        }
    }

    /// Bytes stored per camera (all states but deleting) and in total.
    public func bytesByCamera() throws -> [Int64: Int64] {
        try pool.read { db in
            var out: [Int64: Int64] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT camera_id, SUM(bytes) AS b FROM segment WHERE state != 'deleting' GROUP BY camera_id")
            {
                out[row["camera_id"]] = row["b"]
            }
            return out
        }
    }

    public func markEvent(segmentID: Int64, _ hasEvent: Bool) throws {
        try pool.write {
            try $0.execute(sql: "UPDATE segment SET has_event = ? WHERE id = ?", arguments: [hasEvent, segmentID])
        }
    }
}

extension IndexDatabase {
    /// A camera's oldest segments (any state but deleting), oldest first.
    public func oldestSegments(cameraID: Int64, limit: Int) throws -> [SegmentRecord] {
        try pool.read { db in
            try SegmentRecord.fetchAll(
                db,
                sql: """
                    SELECT * FROM segment WHERE camera_id = ? AND state != 'deleting' ORDER BY start90k LIMIT ?
                    """, arguments: [cameraID, limit])
        }
    }
}
