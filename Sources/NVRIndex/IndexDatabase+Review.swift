import Foundation
import GRDB

extension IndexDatabase {
    /// Of `eventIDs`, those `user` has marked reviewed.
    public func reviewedEvents(user: String, among eventIDs: [Int64]) throws -> Set<Int64> {
        guard !eventIDs.isEmpty else { return [] }
        return try pool.read { db in
            var found = Set<Int64>()
            // In chunks: SQLite limits the number of parameters.
            for chunk in stride(from: 0, to: eventIDs.count, by: 500).map({
                Array(eventIDs[$0..<min($0 + 500, eventIDs.count)])
            }) {
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
                var args: [any DatabaseValueConvertible] = [user]
                args += chunk.map { $0 as any DatabaseValueConvertible }
                found.formUnion(
                    try Int64.fetchAll(
                        db, sql: "SELECT event_id FROM review_mark WHERE user = ? AND event_id IN (\(marks))",
                        arguments: StatementArguments(args)))
            }
            return found
        }
    }

    /// Marks events reviewed by `user` (events that no longer exist are skipped).
    public func markReviewed(user: String, eventIDs: [Int64], at t: Int64) throws {
        try pool.write { db in
            for id in eventIDs {
                try db.execute(
                    sql: """
                        INSERT OR IGNORE INTO review_mark (user, event_id, marked90k)
                          SELECT ?, id, ? FROM event WHERE id = ?
                        """, arguments: [user, t, id])
            }
        }
    }

    /// The time before which everything is reviewed for `user` (nil: never set).
    public func reviewedUntil(user: String) throws -> Int64? {
        try pool.read {
            try Int64.fetchOne($0, sql: "SELECT reviewed_until90k FROM review_state WHERE user = ?", arguments: [user])
        }
    }

    /// Marks everything that ended before `t` reviewed for `user` (never moves back).
    public func setReviewedUntil(user: String, _ t: Int64) throws {
        try pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO review_state (user, reviewed_until90k) VALUES (?, ?)
                      ON CONFLICT(user) DO UPDATE SET reviewed_until90k = MAX(reviewed_until90k, excluded.reviewed_until90k)
                    """, arguments: [user, t])
        }
    }
}
