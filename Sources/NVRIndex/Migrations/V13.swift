import GRDB

/// Schema version 13: the review queue's reviewed flags, per user.
/// - `review_mark`: the events a user has reviewed (an item is reviewed when all its events
///   are; activity that joins it later makes it unreviewed again). Gone with the event.
/// - `review_state`: per user, the time before which everything counts as reviewed ("mark all
///   up to now").
enum MigrationV13 {
    static let name = "v13"

    static func migrate(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE review_mark (
              user TEXT NOT NULL,
              event_id INTEGER NOT NULL REFERENCES event(id) ON DELETE CASCADE,
              marked90k INTEGER NOT NULL,
              PRIMARY KEY (user, event_id)
            ) WITHOUT ROWID;
            CREATE INDEX review_mark_event ON review_mark(event_id);
            CREATE TABLE review_state (
              user TEXT PRIMARY KEY,
              reviewed_until90k INTEGER NOT NULL
            );
            """)
    }
}
