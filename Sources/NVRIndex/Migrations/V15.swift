import GRDB

/// Schema version 15: `user.talk`, whether a viewer may talk through the cameras it sees (their
/// speaker, over an audio back-channel; admins always may).
enum MigrationV15 {
    static let name = "v15"

    static func migrate(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE user ADD COLUMN talk INTEGER NOT NULL DEFAULT 0;
            """)
    }
}
