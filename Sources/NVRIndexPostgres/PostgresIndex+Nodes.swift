import Foundation
import NVRIndex
import PostgresNIO

/// A recorder node as the index knows it.
public struct NodeRecord: Sendable, Equatable, Codable {
    public var name: String
    public var advertiseURL: String?
    public var storageRoot: String
    public var storageID: String
    /// Seconds since its last heartbeat, on the server's clock.
    public var heartbeatAge: Double
    /// Cameras it held at its last heartbeat.
    public var cameras: Int
}

/// Who records a camera, until when (seconds from now, on the server's clock).
public struct LeaseRecord: Sendable, Equatable, Codable {
    public var cameraID: Int64
    public var node: String
    public var token: Int64
    public var expiresIn: Double

    public init(cameraID: Int64, node: String, token: Int64, expiresIn: Double) {
        self.cameraID = cameraID
        self.node = node
        self.token = token
        self.expiresIn = expiresIn
    }
}

/// The lease table's operations. Every time is PostgreSQL's (`clock_timestamp()`), so nodes'
/// clocks never decide who holds a camera; a node's own deadline is measured on its monotonic
/// clock from before the statement that renewed it (NodeLeases).
extension PostgresIndex {
    /// Lease statements wait at most this long for PostgreSQL (a node cut off must find out
    /// well within its lease).
    static let leaseStatementTimeout: TimeAmount = .seconds(2)

    /// Adds or refreshes this node's row at start.
    public func registerNode(_ name: String, advertiseURL: String?, storageRoot: String, storageID: String) throws {
        try autocommit {
            try $0.execute(
                """
                INSERT INTO node (name, advertise_url, storage_root, storage_id, started, heartbeat, cameras)
                VALUES (?, ?, ?, ?, clock_timestamp(), clock_timestamp(), 0)
                ON CONFLICT (name) DO UPDATE SET advertise_url = excluded.advertise_url,
                  storage_root = excluded.storage_root, storage_id = excluded.storage_id,
                  started = excluded.started, heartbeat = excluded.heartbeat, cameras = 0
                """, [.text(name), PostgresValue(advertiseURL), .text(storageRoot), .text(storageID)],
                timeout: Self.leaseStatementTimeout)
            // An earlier process of this name (killed, restarted within a lease) held these:
            // nobody records them now, and this process starts with none.
            try $0.execute(
                "DELETE FROM camera_lease WHERE node = ?", [.text(name)], timeout: Self.leaseStatementTimeout)
        }
    }

    /// Segments recorded before there were nodes (node NULL: a single server's, or a SQLite
    /// index moved by `nvr db migrate`) whose files `isHere` finds in this node's root become
    /// this node's; the number taken. Without this, this node's own-storage queries never see
    /// them: recovery would remove their newest files as files without rows, and retention
    /// would never delete them. The others stay unowned (their files may be in another node's
    /// root). Paged by id; a row another node took meanwhile is left to it.
    public func adoptSegmentsFromBeforeNodes(isHere: (String) -> Bool) throws -> Int {
        guard let node else { return 0 }
        var after: Int64 = 0
        var adopted = 0
        while true {
            let rows = try autocommit {
                try $0.run(
                    "SELECT id, path FROM segment WHERE node IS NULL AND id > ? ORDER BY id LIMIT 5000", [.int(after)]
                ).rows
            }
            guard !rows.isEmpty else { return adopted }
            var here: [PostgresValue] = []
            for row in rows {
                let (id, path) = try row.decode((Int64, String).self)
                after = id
                if isHere(path) { here.append(.int(id)) }
            }
            guard !here.isEmpty else { continue }
            adopted += try autocommit {
                try $0.run(
                    "UPDATE segment SET node = ? WHERE node IS NULL AND id IN (\(Self.marks(here.count)))",
                    [.text(node)] + here
                ).changed
            }
        }
    }

    /// Marks the node as gone (a clean stop), so the others count it out at once.
    public func leaveNode(_ name: String) throws {
        try autocommit {
            try $0.execute(
                "UPDATE node SET heartbeat = clock_timestamp() - interval '1 hour', cameras = 0 WHERE name = ?",
                [.text(name)], timeout: Self.leaseStatementTimeout)
        }
    }

    /// The node's heartbeat and the renewal of every lease it holds, in one transaction; the
    /// leases renewed (camera → token). A lease that expired is renewed too while its row still
    /// carries this node's token: nobody took the camera meanwhile (taking it writes a new
    /// token), so nobody else recorded it, and what the node recorded through an outage stays
    /// its own. Once another node has taken it, the token is gone and it is not renewed.
    public func heartbeat(_ name: String, holding: [Int64: Int64], leaseSeconds: Double) throws -> [Int64: Int64] {
        try transaction(timeout: Self.leaseStatementTimeout) { s in
            // The server gives up too (a client that timed out must not have it commit later).
            try s.execute("SET LOCAL statement_timeout = '2s'", timeout: Self.leaseStatementTimeout)
            try s.execute(
                "UPDATE node SET heartbeat = clock_timestamp(), cameras = ? WHERE name = ?",
                [PostgresValue(holding.count), .text(name)], timeout: Self.leaseStatementTimeout)
            // Rows of this node it does not hold (an acquisition whose answer was lost, a lease
            // it gave up on): gone, so other nodes take those cameras.
            let tokens = holding.values.map { PostgresValue.int($0) }
            try s.execute(
                "DELETE FROM camera_lease WHERE node = ?"
                    + (tokens.isEmpty ? "" : " AND token NOT IN (\(Self.marks(tokens.count)))"),
                [.text(name)] + tokens, timeout: Self.leaseStatementTimeout)
            var out: [Int64: Int64] = [:]
            guard !tokens.isEmpty else { return out }
            for row in try s.run(
                """
                UPDATE camera_lease SET expires = clock_timestamp() + make_interval(secs => ?)
                WHERE node = ? AND token IN (\(Self.marks(tokens.count)))
                RETURNING camera_id, token
                """, [.double(leaseSeconds), .text(name)] + tokens, timeout: Self.leaseStatementTimeout
            ).rows {
                let (camera, token) = try row.decode((Int64, Int64).self)
                out[camera] = token
            }
            return out
        }
    }

    /// Takes a camera whose lease is free or expired; its new token, or nil if another node
    /// holds it.
    public func acquireLease(cameraID: Int64, node: String, leaseSeconds: Double) throws -> Int64? {
        try transaction(timeout: Self.leaseStatementTimeout) {
            try $0.execute("SET LOCAL statement_timeout = '2s'", timeout: Self.leaseStatementTimeout)
            return try $0.scalar(
                Int64.self,
                """
                INSERT INTO camera_lease (camera_id, node, token, acquired, expires)
                VALUES (?, ?, nextval('lease_token'), clock_timestamp(), clock_timestamp() + make_interval(secs => ?))
                ON CONFLICT (camera_id) DO UPDATE SET node = excluded.node, token = excluded.token,
                  acquired = excluded.acquired, expires = excluded.expires
                WHERE camera_lease.expires <= clock_timestamp()
                RETURNING token
                """, [.int(cameraID), .text(node), .double(leaseSeconds)], timeout: Self.leaseStatementTimeout)
        }
    }

    /// Gives a camera up (its recording stopped first); only the holder's own token does.
    public func releaseLease(cameraID: Int64, node: String, token: Int64) throws {
        try autocommit {
            try $0.execute(
                "DELETE FROM camera_lease WHERE camera_id = ? AND node = ? AND token = ?",
                [.int(cameraID), .text(node), .int(token)], timeout: Self.leaseStatementTimeout)
        }
    }

    public func nodes() throws -> [NodeRecord] {
        try autocommit { s in
            try s.run(
                """
                SELECT name, advertise_url, storage_root, storage_id,
                       EXTRACT(EPOCH FROM clock_timestamp() - heartbeat)::float8, cameras
                FROM node ORDER BY name
                """, timeout: Self.leaseStatementTimeout
            ).rows.map { row in
                let (name, url, root, id, age, cameras) = try row.decode(
                    (String, String?, String, String, Double, Int64).self)
                return NodeRecord(
                    name: name, advertiseURL: url, storageRoot: root, storageID: id, heartbeatAge: age,
                    cameras: Int(cameras))
            }
        }
    }

    /// Every unexpired lease.
    public func leases() throws -> [LeaseRecord] {
        try autocommit { s in
            try s.run(
                """
                SELECT camera_id, node, token, EXTRACT(EPOCH FROM expires - clock_timestamp())::float8
                FROM camera_lease WHERE expires > clock_timestamp() ORDER BY camera_id
                """, timeout: Self.leaseStatementTimeout
            ).rows.map { row in
                let (camera, node, token, left) = try row.decode((Int64, String, Int64, Double).self)
                return LeaseRecord(cameraID: camera, node: node, token: token, expiresIn: left)
            }
        }
    }

    /// Removes a node's row (`nvr nodes forget`); its leases lapse on their own.
    public func forgetNode(_ name: String) throws -> Bool {
        try autocommit { try $0.run("DELETE FROM node WHERE name = ?", [.text(name)]).changed > 0 }
    }
}
