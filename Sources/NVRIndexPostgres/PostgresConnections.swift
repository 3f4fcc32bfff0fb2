import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import NVRIndex
import PostgresNIO
import Synchronization

/// A few PostgreSQL connections shared by the index's synchronous calls (the IndexStore
/// protocols are synchronous, as GRDB's are): a call takes an idle connection or opens one,
/// waits for its answers on NIO's event loops, and puts it back. A connection whose channel
/// closed (the server went away, a statement timed out) is not put back; one that only had a
/// statement refused is. The next call opens a fresh one when none is idle, and the index
/// writer retries what failed for want of a connection, so the index comes back by itself after
/// PostgreSQL restarts (PostgresServeTests' 30 s outage). There is no upper bound on open
/// connections: one per call in flight.
///
/// The callers are never on an event loop (HTTP handlers hand index work to `offload`'s thread
/// pool, the recorder and the lease keeper run on threads of their own), which is what
/// blocking on a future needs.
final class PostgresConnections: Sendable {
    let location: PostgresLocation
    private let idle = Mutex<[PostgresConnection]>([])
    private let nextID = Atomic<Int>(1)
    private let logger: Logger
    /// Connections kept idle at most; more may be open while calls overlap.
    static let keptIdle = 4
    /// How long opening a connection may take.
    static let connectTimeout = TimeAmount.seconds(5)

    init(location: PostgresLocation, logger: Logger) {
        self.location = location
        var l = logger
        l[metadataKey: "index"] = "\(location)"
        // PostgresNIO logs every message at trace (rows with password and token hashes).
        if l.logLevel < .info { l.logLevel = .info }
        self.logger = l
    }

    deinit {
        for c in idle.withLock({ $0 }) { Self.close(c) }
    }

    /// Runs `body` on one connection (its statements in autocommit mode).
    func withSession<T>(_ body: (PostgresSession) throws -> T) throws -> T {
        let connection = try take()
        let session = PostgresSession(connection: connection, logger: logger)
        do {
            let result = try body(session)
            give(back: connection)
            return result
        } catch {
            give(back: connection)
            throw error
        }
    }

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    func transaction<T>(timeout: TimeAmount = PostgresSession.statementTimeout, _ body: (PostgresSession) throws -> T)
        throws -> T
    {
        try withSession { s in
            try s.execute("BEGIN", timeout: timeout)
            do {
                let result = try body(s)
                try s.execute("COMMIT", timeout: timeout)
                return result
            } catch {
                // A connection that cannot even roll back is closed, so it is not reused.
                do { try s.execute("ROLLBACK") } catch { Self.close(s.connection) }
                throw error
            }
        }
    }

    /// A connection of the caller's own, never pooled (for session-level locks).
    func dedicated() throws -> PostgresConnection { try take() }

    private func take() throws -> PostgresConnection {
        while let c = idle.withLock({ $0.popLast() }) {
            if !c.isClosed { return c }
        }
        var config = PostgresConnection.Configuration(
            host: location.host, port: location.port, username: location.user, password: location.password,
            database: location.database, tls: .disable)
        if location.tls != .disable {
            var tls = TLSConfiguration.makeClientConfiguration()
            if location.tls == .require {
                // libpq's `require`: encrypted, the certificate unchecked (verify-full checks).
                tls.certificateVerification = .none
            } else if let ca = location.rootCertificate {
                tls.trustRoots = .file(ca)
            }
            do {
                config.tls = .require(try NIOSSLContext(configuration: tls))
            } catch {
                throw IndexError("cannot set up TLS for the index at \(location): \(error)")
            }
        }
        config.options.connectTimeout = Self.connectTimeout
        do {
            return try PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.next(), configuration: config,
                id: nextID.add(1, ordering: .relaxed).oldValue, logger: logger
            ).wait()
        } catch {
            // A wrong password or database is for a person to fix; anything else may pass.
            let state = PostgresSession.sqlState(error)
            throw IndexError(
                "cannot reach the index at \(location): \(PostgresSession.describe(error))",
                retryable: state == nil || PostgresSession.isRetryable(sqlState: state))
        }
    }

    /// Closes and waits until closed (PostgresNIO wants a connection closed before it goes).
    static func close(_ connection: PostgresConnection) {
        let closing: EventLoopFuture<Void> = connection.close()
        try? closing.wait()
    }

    private func give(back connection: PostgresConnection) {
        guard !connection.isClosed else { return }
        let kept = idle.withLock { list -> Bool in
            guard list.count < Self.keptIdle else { return false }
            list.append(connection)
            return true
        }
        if !kept { Self.close(connection) }
    }
}
