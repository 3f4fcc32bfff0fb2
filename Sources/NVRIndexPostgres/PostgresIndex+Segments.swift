import Foundation
import NVRIndex
import NVRTime
import PostgresNIO

extension PostgresIndex {
    /// The id of an identical sample entry, inserting it if new (another node may insert the
    /// same box at the same moment: the unique box decides, and the loser reads the winner's).
    public func sampleEntryID(_ entry: SampleEntryRecord) throws -> Int64 {
        try transaction { try Self.sampleEntryID(entry, $0) }
    }

    static func sampleEntryID(_ entry: SampleEntryRecord, _ s: PostgresSession) throws -> Int64 {
        var e = entry
        e.id = nil
        if let id = try s.insert(e, into: "sample_entry", unlessConflictOn: "box") { return id }
        guard let id = try s.scalar(Int64.self, "SELECT id FROM sample_entry WHERE box = ?", [.bytes(entry.box)]) else {
            throw IndexError("sample entry vanished while being added")
        }
        return id
    }

    public func sampleEntry(id: Int64) throws -> SampleEntryRecord? {
        try autocommit {
            try $0.fetchOne(SampleEntryRecord.self, "SELECT * FROM sample_entry WHERE id = ?", [.int(id)])
        }
    }

    public func insertSegment(_ segment: SegmentRecord) throws -> SegmentRecord {
        var s = stamped(segment)
        s.id = try autocommit { [s] in try $0.insert(s, into: "segment") }
        return s
    }

    public func completeSegment(_ segment: SegmentRecord, frames: SegmentFramesRecord) throws {
        try transaction { s in
            var row = stamped(segment)
            row.state = .complete
            try s.update(row, in: "segment")
            try s.save(frames, in: "segment_frames", key: "segment_id")
        }
    }

    public func segments(state: SegmentRecord.State) throws -> [SegmentRecord] {
        let own = ownSegments()
        return try autocommit {
            try $0.fetchAll(
                SegmentRecord.self, "SELECT * FROM segment WHERE state = ?\(own.sql) ORDER BY id",
                [.text(state.rawValue)] + own.args)
        }
    }

    public func segments(cameraID: Int64, start90k: Int64, end90k: Int64) throws -> [SegmentRecord] {
        try autocommit { s in
            try s.fetchAll(
                SegmentRecord.self,
                """
                SELECT * FROM segment
                WHERE camera_id = ? AND start90k < ? AND start90k >= ? AND start90k + duration90k >= ? AND state != 'deleting'
                ORDER BY start90k, id
                """,
                [
                    .int(cameraID), .int(end90k),
                    .int(try Self.earliestStart(s, cameraID: cameraID, overlapping: start90k)),
                    .int(start90k),
                ])
        }
    }

    /// As IndexDatabase.earliestStart: `start` minus the camera's longest segment and an hour.
    static func earliestStart(_ s: PostgresSession, cameraID: Int64, overlapping start: Int64) throws -> Int64 {
        guard start != .min else { return .min }
        let longest =
            try s.scalar(Int64.self, "SELECT MAX(duration90k) FROM segment WHERE camera_id = ?", [.int(cameraID)]) ?? 0
        return Time90k.subtract(Time90k.subtract(start, longest), 3_600 * 90_000)
    }

    public func timelineSpans(cameraID: Int64, start90k: Int64, end90k: Int64) throws -> [SegmentSpan] {
        try autocommit { s in
            try s.run(
                """
                SELECT start90k, duration90k, bytes, has_event, source FROM segment
                WHERE camera_id = ? AND start90k < ? AND start90k >= ? AND start90k + duration90k > ? AND state != 'deleting'
                ORDER BY start90k, id
                """,
                [
                    .int(cameraID), .int(end90k),
                    .int(try Self.earliestStart(s, cameraID: cameraID, overlapping: start90k)),
                    .int(start90k),
                ]
            ).rows.map { row in
                let (start, duration, bytes, hasEvent, source) = try row.decode(
                    (Int64, Int64, Int64, Int64, String).self)
                return SegmentSpan(
                    start90k: start, duration90k: duration, bytes: bytes, hasEvent: hasEvent != 0, source: source)
            }
        }
    }

    public func newestSegments(cameraID: Int64, limit: Int) throws -> [SegmentRecord] {
        try autocommit {
            try $0.fetchAll(
                SegmentRecord.self,
                "SELECT * FROM segment WHERE camera_id = ? AND state != 'deleting' ORDER BY start90k DESC, id DESC LIMIT ?",
                [.int(cameraID), PostgresValue(limit)])
        }
    }

    public func newestLiveStart(cameraID: Int64) throws -> Int64? {
        try autocommit {
            try $0.scalar(
                Int64.self, "SELECT MAX(start90k) FROM segment WHERE camera_id = ? AND source = 'live'",
                [.int(cameraID)])
        }
    }

    public func cameraID(segmentID: Int64) throws -> Int64? {
        try autocommit { try $0.scalar(Int64.self, "SELECT camera_id FROM segment WHERE id = ?", [.int(segmentID)]) }
    }

    public func segmentID(path: String) throws -> Int64? {
        try autocommit {
            let own = ownSegments()
            return try $0.scalar(
                Int64.self, "SELECT id FROM segment WHERE path = ?\(own.sql) LIMIT 1", [.text(path)] + own.args)
        }
    }

    public func hasSegment(path: String) throws -> Bool {
        try autocommit {
            let own = ownSegments()
            return try $0.scalar(
                Bool.self, "SELECT EXISTS(SELECT 1 FROM segment WHERE path = ?\(own.sql))", [.text(path)] + own.args)
                ?? false
        }
    }

    public func frames(segmentID: Int64) throws -> SegmentFramesRecord? {
        try autocommit {
            try $0.fetchOne(
                SegmentFramesRecord.self, "SELECT * FROM segment_frames WHERE segment_id = ?", [.int(segmentID)])
        }
    }

    public func storageSummary(cameraID: Int64) throws -> CameraStorageSummary {
        try autocommit { s in
            guard
                let row = try s.run(
                    """
                    SELECT COUNT(*), COALESCE(SUM(bytes), 0)::bigint, MIN(start90k), MAX(start90k + duration90k)
                    FROM segment WHERE camera_id = ? AND state != 'deleting'
                    """, [.int(cameraID)]
                ).rows.first
            else { throw IndexError("no storage summary row") }
            let (n, bytes, oldest, newest) = try row.decode((Int64, Int64, Int64?, Int64?).self)
            return CameraStorageSummary(segments: Int(n), bytes: bytes, oldest90k: oldest, newest90k: newest)
        }
    }

    public func markDeleting(segmentIDs: [Int64]) throws {
        try transaction { s in
            for start in stride(from: 0, to: segmentIDs.count, by: 500) {
                let ids = segmentIDs[start..<min(start + 500, segmentIDs.count)]
                try s.execute(
                    "UPDATE segment SET state = 'deleting' WHERE id IN (\(Self.marks(ids.count)))", ids.map { .int($0) }
                )
            }
        }
    }

    public func removeSegments(ids: [Int64]) throws {
        try transaction { s in
            for start in stride(from: 0, to: ids.count, by: 500) {
                let part = ids[start..<min(start + 500, ids.count)]
                let args = part.map { PostgresValue.int($0) }
                try s.execute("DELETE FROM segment_frames WHERE segment_id IN (\(Self.marks(part.count)))", args)
                try s.execute("DELETE FROM segment WHERE id IN (\(Self.marks(part.count)))", args)
            }
        }
    }

    public func hasRecordings(cameraID: Int64, start90k: Int64, end90k: Int64) throws -> Bool {
        try autocommit { s in
            try s.scalar(
                Bool.self,
                """
                SELECT EXISTS(SELECT 1 FROM segment WHERE camera_id = ? AND start90k < ? AND start90k >= ?
                              AND start90k + duration90k > ? AND state != 'deleting')
                """,
                [
                    .int(cameraID), .int(end90k),
                    .int(try Self.earliestStart(s, cameraID: cameraID, overlapping: start90k)),
                    .int(start90k),
                ]) ?? false
        }
    }

    public func allSegments() throws -> [SegmentRecord] {
        let own = ownSegments()
        return try autocommit {
            try $0.fetchAll(SegmentRecord.self, "SELECT * FROM segment WHERE true\(own.sql) ORDER BY id", own.args)
        }
    }

    public func markWriting(segmentID: Int64) throws {
        try autocommit { try $0.execute("UPDATE segment SET state = 'writing' WHERE id = ?", [.int(segmentID)]) }
    }
}
