import Foundation
import Logging
import NVRIndex
import NVRTime
import PostgresNIO

/// The index on PostgreSQL: the same IndexStore as the SQLite index (IndexDatabase), for
/// several recorder nodes sharing one catalogue. Each area's requirements are in the extension
/// of the same name as IndexDatabase's (PostgresIndex+Cameras.swift…), with the same SQL where
/// the dialects agree.
public final class PostgresIndex: Sendable {
    let connections: PostgresConnections
    public var location: PostgresLocation { connections.location }

    /// Connects and brings the schema up to date (several nodes may start at once: the
    /// migrations run under an advisory lock, each in the same transaction as its record).
    public init(location: PostgresLocation, logger: Logger = Logger(label: "nvr.index")) throws {
        connections = PostgresConnections(location: location, logger: logger)
        try PostgresMigrations.migrate(connections)
    }

    /// The schema versions this build knows, oldest first.
    public static var schemaVersions: [String] { PostgresMigrations.all.map(\.name) }

    /// One fresh run id.
    public func nextRunID() throws -> Int64 { try reserveRunIDs(1).lowerBound }

    /// Statements each committed on its own (one statement, or reads that need no snapshot).
    func autocommit<T>(_ body: (PostgresSession) throws -> T) throws -> T { try connections.withSession(body) }
    /// Statements committed together or not at all.
    func transaction<T>(_ body: (PostgresSession) throws -> T) throws -> T { try connections.transaction(body) }

    /// `?, ?, ?` for `n` values.
    static func marks(_ n: Int) -> String { Array(repeating: "?", count: n).joined(separator: ", ") }
}

extension PostgresIndex: IndexStore {}
