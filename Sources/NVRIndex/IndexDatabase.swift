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
        return m
    }

    /// The newest schema version this build knows.
    public static var schemaVersions: [String] { migrator.migrations }
}

/// An index error with a message a person can act on.
public struct IndexError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ message: String) { description = message }

    /// True when SQLite could not write because the disk (or its quota) is full: the recorder
    /// treats it like ENOSPC on a segment file.
    /// True when the write may go in if tried again later: the disk is full, another
    /// connection held the lock past the busy timeout, or an I/O error. (Not a constraint or
    /// a row gone: trying again cannot help those.)
    public static func isRetryable(_ error: any Error) -> Bool {
        guard let e = error as? DatabaseError else { return false }
        return [.SQLITE_FULL, .SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_IOERR, .SQLITE_CANTOPEN, .SQLITE_PROTOCOL].contains(e.resultCode)
    }

    public static func isDiskFull(_ error: any Error) -> Bool {
        guard let e = error as? DatabaseError else { return false }
        return e.resultCode == .SQLITE_FULL
    }
}
