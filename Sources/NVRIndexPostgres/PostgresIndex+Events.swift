import Foundation
import NVRIndex
import NVRTime

extension PostgresIndex {
    public func recordingSettings(cameraID: Int64) throws -> CameraRecordingRecord {
        try autocommit {
            try $0.fetchOne(
                CameraRecordingRecord.self, "SELECT * FROM camera_recording WHERE camera_id = ?", [.int(cameraID)])
        } ?? CameraRecordingRecord(cameraID: cameraID)
    }

    public func setRecordingSettings(_ r: CameraRecordingRecord) throws {
        try transaction { s in
            try s.save(r, in: "camera_recording", key: "camera_id")
            try Self.bumpCamerasGeneration(s)
        }
    }

    public func insertEvent(_ e: EventRecord) throws -> EventRecord {
        var e = e
        e.id = try autocommit { try $0.insert(e, into: "event") }
        return e
    }

    public func event(id: Int64) throws -> EventRecord? {
        try autocommit { try $0.fetchOne(EventRecord.self, "SELECT * FROM event WHERE id = ?", [.int(id)]) }
    }

    public func events(cameraID: Int64?, start90k: Int64, end90k: Int64, type: String?, limit: Int) throws
        -> [EventRecord]
    {
        try events(cameraID: cameraID, start90k: start90k, end90k: end90k, type: type, zone: nil, limit: limit)
    }

    /// As IndexDatabase's: ended events by start within [start − longest, end), open ones by
    /// their partial index; a zone is an element of the event's JSON list.
    public func events(
        cameraID: Int64?, start90k: Int64, end90k: Int64, type: String?, zone: String?, limit: Int
    ) throws -> [EventRecord] {
        try autocommit { s in
            let longest = try s.scalar(Int64.self, "SELECT MAX(end90k - start90k) FROM event") ?? 0
            var sql = """
                SELECT * FROM (
                  SELECT * FROM event WHERE start90k < ? AND start90k >= ? AND end90k > ?
                  UNION ALL
                  SELECT * FROM event WHERE end90k IS NULL AND start90k < ?
                ) e WHERE true
                """
            var args: [PostgresValue] = [
                .int(end90k), .int(Time90k.subtract(Time90k.subtract(start90k, longest), 1)), .int(start90k),
                .int(end90k),
            ]
            if let cameraID {
                sql += " AND camera_id = ?"
                args.append(.int(cameraID))
            }
            if let type {
                sql += " AND type = ?"
                args.append(.text(type))
            }
            if let zone {
                sql += " AND zones IS NOT NULL AND zones::jsonb @> jsonb_build_array(?::text)"
                args.append(.text(zone))
            }
            sql += " ORDER BY start90k DESC, id DESC LIMIT ?"
            args.append(PostgresValue(limit))
            return try s.fetchAll(EventRecord.self, sql, args).reversed()
        }
    }

    /// Ends every open event where the camera's footage around it ends (at its start when there
    /// is none).
    static let closeOpen = """
        UPDATE event SET end90k = GREATEST(start90k, COALESCE((
          SELECT MAX(s.start90k + s.duration90k) FROM segment s
          WHERE s.camera_id = event.camera_id AND s.start90k <= event.start90k + 86400::bigint * 90000
            AND s.start90k + s.duration90k >= event.start90k), start90k))
        WHERE end90k IS NULL
        """

    /// A node closes only the open events of cameras no other node is recording now (their
    /// events are still going on).
    static let notRecordedElsewhere = """
         AND NOT EXISTS (SELECT 1 FROM camera_lease l WHERE l.camera_id = event.camera_id AND l.node != ?
                         AND l.expires > clock_timestamp())
        """

    @discardableResult
    public func closeOpenEvents() throws -> Int {
        try autocommit {
            try $0.run(
                Self.closeOpen + (node == nil ? "" : Self.notRecordedElsewhere), node.map { [.text($0)] } ?? []
            ).changed
        }
    }

    /// A job for the whole cluster, run by one node at a time (a transaction-level advisory
    /// lock; a node that finds it taken skips its turn: nil): closes the events left open on
    /// cameras no node records now, such as a node's that died, as `closeOpenEvents` does at a
    /// start. A node that stops a camera closes its events itself; a camera being recorded
    /// holds an unexpired lease.
    public func closeEventsNobodyRecords() throws -> Int? {
        try transaction { s in
            guard
                try s.scalar(
                    Bool.self, "SELECT pg_try_advisory_xact_lock(?::int, 1)", [.int(PostgresLockSpace.clusterJobs)])
                    == true
            else { return nil }
            return try s.run(
                Self.closeOpen + """
                     AND NOT EXISTS (SELECT 1 FROM camera_lease l WHERE l.camera_id = event.camera_id
                                     AND l.expires > clock_timestamp())
                    """
            ).changed
        }
    }

    public func deleteEvent(id: Int64) throws -> Bool {
        try autocommit { try $0.run("DELETE FROM event WHERE id = ?", [.int(id)]).changed > 0 }
    }

    public func deleteEvents(cameraID: Int64, clipEndingBefore t: Int64?) throws -> Int {
        try autocommit {
            try $0.run(
                """
                DELETE FROM event WHERE camera_id = ? AND end90k IS NOT NULL AND end90k + post_roll90k < ?
                  AND id NOT IN (SELECT event_id FROM protected_clip WHERE event_id IS NOT NULL)
                """, [.int(cameraID), .int(t ?? Int64.max)]
            ).changed
        }
    }

    // MARK: Review

    public func reviewedEvents(user: String, among eventIDs: [Int64]) throws -> Set<Int64> {
        guard !eventIDs.isEmpty else { return [] }
        return try autocommit { s in
            var found = Set<Int64>()
            for start in stride(from: 0, to: eventIDs.count, by: 500) {
                let chunk = eventIDs[start..<min(start + 500, eventIDs.count)]
                let rows = try s.run(
                    #"SELECT event_id FROM review_mark WHERE "user" = ? AND event_id IN ("# + Self.marks(chunk.count)
                        + ")",
                    [.text(user)] + chunk.map { .int($0) }
                ).rows
                for row in rows { found.insert(try row.decode(Int64.self)) }
            }
            return found
        }
    }

    public func markReviewed(user: String, eventIDs: [Int64], at t: Int64) throws {
        try transaction { s in
            for id in eventIDs {
                try s.execute(
                    #"""
                    INSERT INTO review_mark ("user", event_id, marked90k) SELECT ?, id, ? FROM event WHERE id = ?
                    ON CONFLICT DO NOTHING
                    """#, [.text(user), .int(t), .int(id)])
            }
        }
    }

    public func reviewedUntil(user: String) throws -> Int64? {
        try autocommit {
            try $0.scalar(Int64.self, #"SELECT reviewed_until90k FROM review_state WHERE "user" = ?"#, [.text(user)])
        }
    }

    public func setReviewedUntil(user: String, _ t: Int64) throws {
        try autocommit {
            try $0.execute(
                #"""
                INSERT INTO review_state ("user", reviewed_until90k) VALUES (?, ?)
                ON CONFLICT ("user") DO UPDATE
                  SET reviewed_until90k = GREATEST(review_state.reviewed_until90k, excluded.reviewed_until90k)
                """#, [.text(user), .int(t)])
        }
    }

    // MARK: Retention

    public func retention(cameraID: Int64) throws -> CameraRetention? {
        try autocommit {
            try $0.fetchOne(
                CameraRetention.self, "SELECT * FROM camera_retention WHERE camera_id = ?", [.int(cameraID)])
        }
    }

    public func setRetention(_ r: CameraRetention) throws {
        try autocommit { try $0.save(r, in: "camera_retention", key: "camera_id") }
    }

    public func setting(_ key: String) throws -> String? {
        try autocommit { try $0.scalar(String.self, "SELECT value FROM setting WHERE key = ?", [.text(key)]) }
    }

    public func setSetting(_ key: String, _ value: String?) throws {
        try autocommit { try Self.setSetting(key, value, in: $0) }
    }

    public func saveRetention(settings: [(key: String, value: String?)], cameras: [CameraRetention]) throws {
        try transaction { s in
            for x in settings { try Self.setSetting(x.key, x.value, in: s) }
            for r in cameras { try s.save(r, in: "camera_retention", key: "camera_id") }
        }
    }

    private static func setSetting(_ key: String, _ value: String?, in s: PostgresSession) throws {
        if let value {
            try s.execute(
                "INSERT INTO setting (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [.text(key), .text(value)])
        } else {
            try s.execute("DELETE FROM setting WHERE key = ?", [.text(key)])
        }
    }

    public func deletionCandidates(cameraID: Int64?, olderThan end90k: Int64, hasEvent: Bool?, limit: Int)
        throws -> [SegmentRecord]
    {
        let own = ownSegments()
        var sql =
            "SELECT * FROM segment WHERE state = 'complete' AND start90k + duration90k <= ? AND \(Self.unprotectedSegment)\(own.sql)"
        var args: [PostgresValue] = [.int(end90k)] + own.args
        if let cameraID {
            sql += " AND camera_id = ?"
            args.append(.int(cameraID))
        }
        if let hasEvent {
            sql += " AND has_event = ?"
            args.append(PostgresValue(hasEvent))
        }
        sql += " ORDER BY has_event, start90k LIMIT ?"
        args.append(PostgresValue(limit))
        return try autocommit { try $0.fetchAll(SegmentRecord.self, sql, args) }
    }

    public func bytesByCamera() throws -> [Int64: Int64] {
        try autocommit { s in
            var out: [Int64: Int64] = [:]
            let own = ownSegments()
            for row in try s.run(
                "SELECT camera_id, SUM(bytes)::bigint FROM segment WHERE state != 'deleting'\(own.sql) GROUP BY camera_id",
                own.args
            ).rows {
                let (camera, bytes) = try row.decode((Int64, Int64).self)
                out[camera] = bytes
            }
            return out
        }
    }

    public func markEvent(segmentID: Int64, _ hasEvent: Bool) throws {
        try autocommit {
            try $0.execute("UPDATE segment SET has_event = ? WHERE id = ?", [PostgresValue(hasEvent), .int(segmentID)])
        }
    }

    public func oldestSegments(cameraID: Int64, limit: Int) throws -> [SegmentRecord] {
        try autocommit {
            try $0.fetchAll(
                SegmentRecord.self,
                "SELECT * FROM segment WHERE camera_id = ? AND state != 'deleting' ORDER BY start90k LIMIT ?",
                [.int(cameraID), PostgresValue(limit)])
        }
    }
}
