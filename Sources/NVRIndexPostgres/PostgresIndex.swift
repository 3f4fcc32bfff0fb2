import Foundation
import Logging
import NIOCore
import NVRIndex
import NVRTime
import PostgresNIO
import Synchronization

/// The index on PostgreSQL: the same IndexStore as the SQLite index (IndexDatabase), for
/// several recorder nodes sharing one catalogue. Each area's requirements are in the extension
/// of the same name as IndexDatabase's (PostgresIndex+Cameras.swift…), with the same SQL where
/// the dialects agree.
public final class PostgresIndex: Sendable {
    let connections: PostgresConnections
    public var location: PostgresLocation { connections.location }
    /// The recorder node this index serves (design/scale-out.md), nil for a single NVR. A
    /// node's segments are stamped with its name, and what concerns its own storage —
    /// recovery's unfinished segments, retention's candidates and byte counts, the integrity
    /// check's rows, whether a file has a row — is its own segments only; playback, the
    /// timeline and events see every node's.
    public let node: String?
    /// The leases this node holds, by camera: with a node, the recording path's writes for a
    /// camera are applied only while the index's lease for it still carries this token.
    public let fence = LeaseTokens()
    let logger: Logger
    /// The connection holding the serve lock (holdServeLock), while held.
    let serveLock = Mutex<PostgresConnection?>(nil)
    /// The last answer of `answersNow` and whether one is being asked (PostgresIndex+Probe.swift).
    let probeState = Mutex(ProbeState())
    /// The nodes' shared key, once read (PostgresIndex+Peers.swift).
    let nodeKeyCache = Mutex<String?>(nil)

    /// Connects and brings the schema up to date (several nodes may start at once: the
    /// migrations run under an advisory lock, each in the same transaction as its record).
    public init(location: PostgresLocation, node: String? = nil, logger: Logger = Logger(label: "nvr.index")) throws {
        connections = PostgresConnections(location: location, logger: logger)
        self.node = node
        self.logger = logger
        try PostgresMigrations.migrate(connections)
    }

    /// `AND node = ?` (and its value) when this index serves a node.
    func ownSegments(_ column: String = "node") -> (sql: String, args: [PostgresValue]) {
        guard let node else { return ("", []) }
        return (" AND \(column) = ?", [.text(node)])
    }

    /// The row as this node writes it: stamped with the node's name.
    func stamped(_ segment: SegmentRecord) -> SegmentRecord {
        var s = segment
        if s.node == nil { s.node = node }
        return s
    }

    /// The schema versions this build knows, oldest first.
    public static var schemaVersions: [String] { PostgresMigrations.all.map(\.name) }

    /// One fresh run id.
    public func nextRunID() throws -> Int64 { try reserveRunIDs(1).lowerBound }

    /// Statements each committed on its own (one statement, or reads that need no snapshot).
    func autocommit<T>(_ body: (PostgresSession) throws -> T) throws -> T { try connections.withSession(body) }
    /// Statements committed together or not at all.
    func transaction<T>(
        timeout: TimeAmount = PostgresSession.statementTimeout, _ body: (PostgresSession) throws -> T
    ) throws -> T { try connections.transaction(timeout: timeout, body) }

    /// `?, ?, ?` for `n` values.
    static func marks(_ n: Int) -> String { Array(repeating: "?", count: n).joined(separator: ", ") }
}

extension PostgresIndex: IndexStore {}
