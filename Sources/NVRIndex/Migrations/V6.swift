import GRDB

/// Schema version 6: card files that are listed but kept off the timeline (the second lens of
/// a 360 camera's pair covers the same time as the first; design/card.md), and camera-side
/// recordings that live in the vendor's cloud rather than on the card.
enum MigrationV6 {
    static let name = "v6"

    static func migrate(_ db: Database) throws {
        try db.execute(sql: """
            -- 1: the file's span is shown on the timeline and backfilled; 0: listed only.
            ALTER TABLE card_slice ADD COLUMN on_timeline INTEGER NOT NULL DEFAULT 1;
            -- 'card': on the camera's memory card (readable, backfilled); 'cloud': in the vendor's
            -- cloud storage (shown on the timeline only).
            ALTER TABLE card_slice ADD COLUMN source TEXT NOT NULL DEFAULT 'card' CHECK (source IN ('card', 'cloud'));
            """)
    }
}
