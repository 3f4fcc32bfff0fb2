import Foundation
import GRDB
import NVRTime

/// Totals of a camera's recordings.
public struct CameraStorageSummary: Sendable, Equatable {
    public var segments: Int
    public var bytes: Int64
    public var oldest90k: Int64?
    public var newest90k: Int64?

    public init(segments: Int, bytes: Int64, oldest90k: Int64?, newest90k: Int64?) {
        self.segments = segments
        self.bytes = bytes
        self.oldest90k = oldest90k
        self.newest90k = newest90k
    }
}

extension IndexDatabase {
    /// The id of an identical sample entry, inserting it if new.
    public func sampleEntryID(_ entry: SampleEntryRecord) throws -> Int64 {
        try pool.write { db in
            if let id = try Int64.fetchOne(db, sql: "SELECT id FROM sample_entry WHERE box = ?", arguments: [entry.box])
            {
                return id
            }
            var e = entry
            try e.insert(db)
            return e.id!
        }
    }

    public func sampleEntry(id: Int64) throws -> SampleEntryRecord? {
        try pool.read { try SampleEntryRecord.fetchOne($0, key: id) }
    }

    /// Inserts a segment row in state *writing* (the file already exists).
    public func insertSegment(_ segment: SegmentRecord) throws -> SegmentRecord {
        try pool.write { db in
            var s = segment
            try s.insert(db)
            return s
        }
    }

    /// Marks a segment complete together with its frame index, in one transaction.
    public func completeSegment(_ segment: SegmentRecord, frames: SegmentFramesRecord) throws {
        try pool.write { db in
            var s = segment
            s.state = .complete
            try s.update(db)
            try frames.save(db)
        }
    }

    public func segments(state: SegmentRecord.State) throws -> [SegmentRecord] {
        try pool.read { try SegmentRecord.filter(Column("state") == state.rawValue).order(Column("id")).fetchAll($0) }
    }

    /// Segments of a camera overlapping [start, end), oldest first.
    public func segments(cameraID: Int64, start90k: Int64, end90k: Int64) throws -> [SegmentRecord] {
        try pool.read { db in
            try SegmentRecord.fetchAll(
                db,
                sql: """
                    SELECT * FROM segment
                    WHERE camera_id = ? AND start90k < ? AND start90k >= ? AND start90k + duration90k >= ? AND state != 'deleting'
                    ORDER BY start90k, id
                    """,
                arguments: [
                    cameraID, end90k, try Self.earliestStart(db, cameraID: cameraID, overlapping: start90k), start90k,
                ])
        }
    }

    /// The lowest `start90k` a segment overlapping `start` can have: `start` minus the camera's
    /// longest segment (an index lookup, schema v3), so range queries scan only their range.
    static func earliestStart(_ db: Database, cameraID: Int64, overlapping start: Int64) throws -> Int64 {
        guard start != .min else { return .min }
        // A segment being written may have grown since its row was last updated.
        let longest =
            try Int64.fetchOne(
                db, sql: "SELECT MAX(duration90k) FROM segment WHERE camera_id = ?", arguments: [cameraID]) ?? 0
        return Time90k.subtract(Time90k.subtract(start, longest), 3_600 * 90_000)
    }

    /// Timeline rows of a camera overlapping [start, end): only the columns slices need, read
    /// without building records (the timeline of a day answers in well under a millisecond).
    public func timelineSpans(cameraID: Int64, start90k: Int64, end90k: Int64) throws -> [SegmentSpan] {
        try pool.read { db in
            var out: [SegmentSpan] = []
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT start90k, duration90k, bytes, has_event, source FROM segment
                    WHERE camera_id = ? AND start90k < ? AND start90k >= ? AND start90k + duration90k > ? AND state != 'deleting'
                    ORDER BY start90k, id
                    """,
                arguments: [
                    cameraID, end90k, try Self.earliestStart(db, cameraID: cameraID, overlapping: start90k), start90k,
                ])
            while let r = try rows.next() {
                out.append(SegmentSpan(start90k: r[0], duration90k: r[1], bytes: r[2], hasEvent: r[3], source: r[4]))
            }
            return out
        }
    }

    /// The camera's newest segments, newest first (snapshots of "now").
    public func newestSegments(cameraID: Int64, limit: Int) throws -> [SegmentRecord] {
        try pool.read { db in
            try SegmentRecord.fetchAll(
                db,
                sql: """
                    SELECT * FROM segment WHERE camera_id = ? AND state != 'deleting' ORDER BY start90k DESC, id DESC LIMIT ?
                    """, arguments: [cameraID, limit])
        }
    }

    /// Start of a camera's newest live segment (any state), or nil.
    public func newestLiveStart(cameraID: Int64) throws -> Int64? {
        try pool.read {
            try Int64.fetchOne(
                $0, sql: "SELECT MAX(start90k) FROM segment WHERE camera_id = ? AND source = 'live'",
                arguments: [cameraID])
        }
    }

    /// Whether any segment row (any camera, any state) has this path.
    public func hasSegment(path: String) throws -> Bool {
        try pool.read {
            try Bool.fetchOne($0, sql: "SELECT EXISTS(SELECT 1 FROM segment WHERE path = ?)", arguments: [path])
                ?? false
        }
    }

    public func cameraID(segmentID: Int64) throws -> Int64? {
        try pool.read {
            try Int64.fetchOne($0, sql: "SELECT camera_id FROM segment WHERE id = ?", arguments: [segmentID])
        }
    }

    public func segmentID(path: String) throws -> Int64? {
        try pool.read {
            try Int64.fetchOne($0, sql: "SELECT id FROM segment WHERE path = ? LIMIT 1", arguments: [path])
        }
    }

    public func frames(segmentID: Int64) throws -> SegmentFramesRecord? {
        try pool.read { try SegmentFramesRecord.fetchOne($0, key: segmentID) }
    }

    public func storageSummary(cameraID: Int64) throws -> CameraStorageSummary {
        try pool.read { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT COUNT(*) AS n, COALESCE(SUM(bytes), 0) AS b, MIN(start90k) AS o, MAX(start90k + duration90k) AS e
                    FROM segment WHERE camera_id = ? AND state != 'deleting'
                    """, arguments: [cameraID])!
            return CameraStorageSummary(segments: row["n"], bytes: row["b"], oldest90k: row["o"], newest90k: row["e"])
        }
    }

    /// Marks a segment as being deleted (step one of crash-safe deletion).
    public func markDeleting(segmentIDs: [Int64]) throws {
        try pool.write { db in
            for chunk in stride(from: 0, to: segmentIDs.count, by: 500) {
                let ids = Array(segmentIDs[chunk..<min(chunk + 500, segmentIDs.count)])
                try db.execute(
                    sql:
                        "UPDATE segment SET state = 'deleting' WHERE id IN (\(ids.map { _ in "?" }.joined(separator: ",")))",
                    arguments: StatementArguments(ids))
            }
        }
    }

    /// Removes rows whose files are gone (step three of crash-safe deletion).
    public func removeSegments(ids: [Int64]) throws {
        try pool.write { db in
            for chunk in stride(from: 0, to: ids.count, by: 500) {
                let part = Array(ids[chunk..<min(chunk + 500, ids.count)])
                let marks = part.map { _ in "?" }.joined(separator: ",")
                try db.execute(
                    sql: "DELETE FROM segment_frames WHERE segment_id IN (\(marks))",
                    arguments: StatementArguments(part))
                try db.execute(sql: "DELETE FROM segment WHERE id IN (\(marks))", arguments: StatementArguments(part))
            }
        }
    }
}

extension IndexDatabase {
    /// Whether a camera has any recording overlapping [start, end).
    public func hasRecordings(cameraID: Int64, start90k: Int64, end90k: Int64) throws -> Bool {
        try pool.read { db in
            try Bool.fetchOne(
                db,
                sql: """
                    SELECT EXISTS(SELECT 1 FROM segment WHERE camera_id = ? AND start90k < ? AND start90k >= ? AND start90k + duration90k > ?
                                  AND state != 'deleting')
                    """,
                arguments: [
                    cameraID, end90k, try Self.earliestStart(db, cameraID: cameraID, overlapping: start90k), start90k,
                ]) ?? false
        }
    }

    /// Every segment row, for integrity checks.
    public func allSegments() throws -> [SegmentRecord] {
        try pool.read { try SegmentRecord.order(Column("id")).fetchAll($0) }
    }
}

extension IndexDatabase {
    /// Puts a complete segment back to *writing* so recovery re-indexes it from its file.
    public func markWriting(segmentID: Int64) throws {
        try pool.write {
            try $0.execute(sql: "UPDATE segment SET state = 'writing' WHERE id = ?", arguments: [segmentID])
        }
    }
}
