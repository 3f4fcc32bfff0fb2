import Foundation
import Logging
import NVRIndex
import PostgresNIO
import Synchronization

/// One `nvr serve` per index, or per node name with nodes: a session-level advisory lock held
/// on a connection of its own for the server's life (PostgreSQL releases it when that
/// connection ends, a crash included). A second server on a single-node index would recover,
/// retain and close events as if the other's live rows were its own.
extension PostgresIndex {
    /// The lock's key for this index's node (or for the one server without nodes).
    var serveLockKey: Int64 { Self.fnv1a("nvr serve:\(node ?? "")") }
    /// Taken shared by every node and exclusively by a server without one: a single server
    /// never runs beside nodes (it would take their cameras and rows as its own).
    static let anyServeLockKey = fnv1a("nvr serve")

    /// FNV-1a of a string: a key the same in every process (Swift's hashValue is not).
    public static func fnv1a(_ s: String) -> Int64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in s.utf8 { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        return Int64(bitPattern: h)
    }

    /// Takes the lock, or says who holds it.
    public func holdServeLock() throws {
        let connection = try connections.dedicated()
        let session = PostgresSession(connection: connection, logger: logger)
        let taken: Bool
        do {
            if node == nil {
                taken =
                    try session.scalar(Bool.self, "SELECT pg_try_advisory_lock(?)", [.int(Self.anyServeLockKey)])
                    ?? false
            } else {
                taken =
                    try session.scalar(
                        Bool.self, "SELECT pg_try_advisory_lock_shared(?) AND pg_try_advisory_lock(?)",
                        [.int(Self.anyServeLockKey), .int(serveLockKey)]) ?? false
            }
        } catch {
            PostgresConnections.close(connection)
            throw error
        }
        guard taken else {
            PostgresConnections.close(connection)
            throw IndexError(
                node.map {
                    "another nvr serve already runs as node \($0), or one without a node, on the index at \(location)"
                } ?? "another nvr serve already uses the index at \(location) (several need [cluster] node)")
        }
        serveLock.withLock { old in
            if let old { PostgresConnections.close(old) }
            old = connection
        }
    }

    /// Gives the lock back (at stop).
    public func releaseServeLock() {
        if let c = serveLock.withLock({ c -> PostgresConnection? in
            defer { c = nil }
            return c
        }) {
            PostgresConnections.close(c)
        }
    }
}
