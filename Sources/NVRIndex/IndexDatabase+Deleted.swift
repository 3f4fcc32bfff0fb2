import GRDB
import NVRTime

extension IndexDatabase {
    /// Spans within this of each other are one span (segments of a run touch; a second
    /// between two deletions is not worth a backfill).
    public static let deletedMergeTolerance90k: Int64 = 90_000

    /// Records that `range` of a camera's time was deleted (by a user or retention), merged
    /// with the spans it touches, so card backfill leaves it deleted.
    public func recordDeleted(cameraID: Int64, _ range: Range<Int64>, reason: String, now: Int64) throws {
        guard !range.isEmpty else { return }
        let tolerance = Self.deletedMergeTolerance90k
        try pool.write { db in
            let touching = try Row.fetchAll(
                db,
                sql: """
                    SELECT id, start90k, end90k FROM deleted_range
                    WHERE camera_id = ? AND end90k >= ? AND start90k <= ?
                    """,
                arguments: [
                    cameraID, Time90k.subtract(range.lowerBound, tolerance), Time90k.add(range.upperBound, tolerance),
                ])
            var start = range.lowerBound
            var end = range.upperBound
            for r in touching {
                start = min(start, r["start90k"] as Int64)
                end = max(end, r["end90k"] as Int64)
            }
            if !touching.isEmpty {
                try db.execute(
                    sql: "DELETE FROM deleted_range WHERE id IN (\(touching.map { _ in "?" }.joined(separator: ",")))",
                    arguments: StatementArguments(touching.map { $0["id"] as Int64 }))
            }
            try db.execute(
                sql:
                    "INSERT INTO deleted_range (camera_id, start90k, end90k, reason, deleted90k) VALUES (?, ?, ?, ?, ?)",
                arguments: [cameraID, start, end, reason, now])
        }
    }

    /// The deleted spans of a camera overlapping [start, end).
    public func deletedRanges(cameraID: Int64, start90k: Int64, end90k: Int64) throws -> [Range<Int64>] {
        try pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT start90k, end90k FROM deleted_range WHERE camera_id = ? AND end90k > ? AND start90k < ? ORDER BY start90k
                    """, arguments: [cameraID, start90k, end90k]
            )
            .compactMap { r in
                let s: Int64 = r["start90k"]
                let e: Int64 = r["end90k"]
                return s < e ? s..<e : nil
            }
        }
    }
}
