import Foundation
import GRDB
import NVRTime

extension IndexDatabase {
    public func recordingSettings(cameraID: Int64) throws -> CameraRecordingRecord {
        try pool.read { try CameraRecordingRecord.fetchOne($0, key: cameraID) }
            ?? CameraRecordingRecord(cameraID: cameraID)
    }

    /// Saves a camera's recording settings and bumps the cameras generation with them: a
    /// running server hands them to the camera's recording gate within a second.
    public func setRecordingSettings(_ r: CameraRecordingRecord) throws {
        try pool.write { db in
            try r.save(db)
            try Self.bumpCamerasGeneration(db)
        }
    }

    public func insertEvent(_ e: EventRecord) throws -> EventRecord {
        try pool.write { db in
            var e = e
            try e.insert(db)
            return e
        }
    }

    public func event(id: Int64) throws -> EventRecord? { try pool.read { try EventRecord.fetchOne($0, key: id) } }

    /// Events overlapping [start, end) (an event in progress reaches to now), oldest first;
    /// of one camera or all, of one type or all. `limit` keeps the newest of them.
    public func events(cameraID: Int64?, start90k: Int64, end90k: Int64, type: String?, limit: Int) throws
        -> [EventRecord]
    {
        try events(cameraID: cameraID, start90k: start90k, end90k: end90k, type: type, zone: nil, limit: limit)
    }

    /// As above, of events whose object stood in `zone` (when given).
    public func events(
        cameraID: Int64?, start90k: Int64, end90k: Int64, type: String?, zone: String?, limit: Int
    ) throws -> [EventRecord] {
        try pool.read { db in
            // Ended events: start within [start − longest, end), an index lookup each way
            // (event_length answers "longest" at once). Events in progress: their own partial
            // index, named because with a camera filter SQLite would otherwise walk all of that
            // camera's events before `end` to find the few open ones.
            let longest = try Int64.fetchOne(db, sql: "SELECT MAX(end90k - start90k) FROM event") ?? 0
            var sql = """
                SELECT * FROM (
                  SELECT * FROM event WHERE start90k < ? AND start90k >= ? AND end90k > ?
                  UNION ALL
                  SELECT * FROM event INDEXED BY event_open WHERE end90k IS NULL AND start90k < ?
                ) WHERE 1
                """
            var args: [any DatabaseValueConvertible] = [
                end90k, Time90k.subtract(Time90k.subtract(start90k, longest), 1), start90k, end90k,
            ]
            if let cameraID {
                sql += " AND camera_id = ?"
                args.append(cameraID)
            }
            if let type {
                sql += " AND type = ?"
                args.append(type)
            }
            if let zone {
                sql += " AND EXISTS (SELECT 1 FROM json_each(zones) WHERE value = ?)"
                args.append(zone)
            }
            sql += " ORDER BY start90k DESC, id DESC LIMIT ?"
            args.append(limit)
            return try EventRecord.fetchAll(db, sql: sql, arguments: StatementArguments(args)).reversed()
        }
    }

    /// Events left open by a server that stopped without closing them (a crash): they end
    /// where the camera's recordings covering them end, or at their start.
    @discardableResult
    public func closeOpenEvents() throws -> Int {
        try pool.write { db in
            try db.execute(
                sql: """
                    UPDATE event SET end90k = MAX(start90k, COALESCE((
                      SELECT MAX(s.start90k + s.duration90k) FROM segment s
                      WHERE s.camera_id = event.camera_id AND s.start90k <= event.start90k + 86400 * 90000
                        AND s.start90k + s.duration90k >= event.start90k), start90k))
                    WHERE end90k IS NULL
                    """)
            return db.changesCount
        }
    }

    /// Deletes the camera's ended events whose clip (end + post-roll) ends before `t`: what
    /// retention does once their footage is gone. nil `t`: the camera has no footage left.
    @discardableResult
    /// Deletes one event (its footage stays; a clip marked "keep" keeps its range).
    public func deleteEvent(id: Int64) throws -> Bool {
        try pool.write { try EventRecord.deleteOne($0, key: id) }
    }

    public func deleteEvents(cameraID: Int64, clipEndingBefore t: Int64?) throws -> Int {
        try pool.write { db in
            // An event a kept clip refers to stays with it.
            try db.execute(
                sql: """
                    DELETE FROM event WHERE camera_id = ? AND end90k IS NOT NULL AND end90k + post_roll90k < ?
                      AND id NOT IN (SELECT event_id FROM protected_clip WHERE event_id IS NOT NULL)
                    """, arguments: [cameraID, t ?? Int64.max])
            return db.changesCount
        }
    }
}
