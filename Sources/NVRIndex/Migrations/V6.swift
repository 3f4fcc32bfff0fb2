import GRDB

/// Schema version 6: card files that are listed but kept off the timeline (the second lens of
/// a 360 camera's pair covers the same time as the first; design/card.md).
enum MigrationV6 {
    static let name = "v6"

    static func migrate(_ db: Database) throws {
        try db.execute(sql: """
            -- 1: the file's span is shown on the timeline and backfilled; 0: listed only.
            ALTER TABLE card_slice ADD COLUMN on_timeline INTEGER NOT NULL DEFAULT 1;
            """)
    }
}
