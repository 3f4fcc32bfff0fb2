import Foundation
import GRDB

/// The SQLite index: a GRDB pool in WAL mode, so readers (HTTP, CLI) never wait for the
/// recorder's writes.
public final class IndexDatabase: Sendable {
    public let pool: DatabasePool
    public let path: String

    public init(path: String) throws {
        self.path = path
        var config = Configuration()
        config.foreignKeysEnabled = true
        config.busyMode = .timeout(10)
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        do {
            pool = try DatabasePool(path: path, configuration: config)
        } catch {
            throw IndexError("cannot open index \(path): \(error)")
        }
        try Self.migrator.migrate(pool)
    }

    static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration(MigrationV1.name, migrate: MigrationV1.migrate)
        m.registerMigration(MigrationV2.name, migrate: MigrationV2.migrate)
        m.registerMigration(MigrationV3.name, migrate: MigrationV3.migrate)
        m.registerMigration(MigrationV4.name, migrate: MigrationV4.migrate)
        m.registerMigration(MigrationV5.name, migrate: MigrationV5.migrate)
        m.registerMigration(MigrationV6.name, migrate: MigrationV6.migrate)
        m.registerMigration(MigrationV7.name, migrate: MigrationV7.migrate)
        m.registerMigration(MigrationV8.name, migrate: MigrationV8.migrate)
        m.registerMigration(MigrationV9.name, migrate: MigrationV9.migrate)
        m.registerMigration(MigrationV10.name, migrate: MigrationV10.migrate)
        m.registerMigration(MigrationV11.name, migrate: MigrationV11.migrate)
        m.registerMigration(MigrationV12.name, migrate: MigrationV12.migrate)
        m.registerMigration(MigrationV13.name, migrate: MigrationV13.migrate)
        m.registerMigration(MigrationV14.name, migrate: MigrationV14.migrate)
        m.registerMigration(MigrationV15.name, migrate: MigrationV15.migrate)
        m.registerMigration(MigrationV16.name, migrate: MigrationV16.migrate)
        return m
    }

    /// The newest schema version this build knows.
    public static var schemaVersions: [String] { migrator.migrations }
}
