import GRDB

/// Schema version 14: `user.ptz`, whether a viewer may turn and zoom the cameras it sees
/// (admins always may).
enum MigrationV14 {
    static let name = "v14"

    static func migrate(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE user ADD COLUMN ptz INTEGER NOT NULL DEFAULT 0;
            """)
    }
}
