import GRDB
import NVRTime

extension IndexDatabase {
    /// The setting bumped on every change to the cameras: a running server polls it and
    /// starts, restarts or stops sessions (changes from the API or from `nvr` in another
    /// process take effect while recording).
    public static let camerasGenerationKey = "cameras.generation"

    /// Adds a camera; a duplicate name is a clear error. A camera removed earlier with its
    /// recordings kept comes back under the same row, with its recordings.
    @discardableResult
    public func addCamera(_ camera: CameraRecord) throws -> CameraRecord {
        try pool.write { db in
            var c = camera
            if let old = try CameraRecord.filter(Column("name") == camera.name).fetchOne(db) {
                guard old.removed90k != nil else { throw IndexError("a camera named '\(camera.name)' already exists") }
                c.id = old.id
                c.created90k = old.created90k
                c.removed90k = nil
                try c.update(db)
            } else {
                try c.insert(db)
            }
            try Self.bumpCamerasGeneration(db)
            return c
        }
    }

    /// Saves a changed camera row (config, enabled, name) and tells running servers.
    public func updateCamera(_ camera: CameraRecord) throws {
        try pool.write { db in
            try camera.update(db)
            try Self.bumpCamerasGeneration(db)
        }
    }

    /// The cameras in use (removed ones only with `includeRemoved`: retention still looks after
    /// their recordings).
    public func cameras(includeRemoved: Bool) throws -> [CameraRecord] {
        try pool.read { db in
            var q = CameraRecord.order(Column("name"))
            if !includeRemoved { q = q.filter(Column("removed90k") == nil) }
            return try q.fetchAll(db)
        }
    }

    public func camera(named name: String, includeRemoved: Bool) throws -> CameraRecord? {
        try pool.read { db in
            let c = try CameraRecord.filter(Column("name") == name).fetchOne(db)
            return includeRemoved || c?.removed90k == nil ? c : nil
        }
    }

    /// Removes a camera row; its segments must be gone first.
    public func removeCamera(id: Int64) throws {
        try pool.write { db in
            let n = try SegmentRecord.filter(Column("camera_id") == id).fetchCount(db)
            guard n == 0 else { throw IndexError("camera still has \(n) segments") }
            _ = try CameraRecord.deleteOne(db, key: id)
            try Self.bumpCamerasGeneration(db)
        }
    }

    /// Takes a camera out of use but keeps its recordings (and its row, to hold them).
    public func retireCamera(id: Int64, at time90k: Int64) throws {
        try pool.write { db in
            try db.execute(sql: "UPDATE camera SET removed90k = ?, enabled = 0 WHERE id = ?", arguments: [time90k, id])
            try Self.bumpCamerasGeneration(db)
        }
    }

    /// The current cameras generation (0 before any change).
    public func camerasGeneration() throws -> Int64 {
        try pool.read {
            try Int64.fetchOne(
                $0, sql: "SELECT CAST(value AS INTEGER) FROM setting WHERE key = ?",
                arguments: [Self.camerasGenerationKey]) ?? 0
        }
    }

    /// Marks a change the running server picks up (camera rows and recording settings), in the
    /// change's own transaction.
    static func bumpCamerasGeneration(_ db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO setting(key, value) VALUES (?, '1')
                ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1
                """, arguments: [camerasGenerationKey])
    }
}

/// A camera's last connection state as recorded by `nvr serve`.
public struct CameraStateRecord: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "camera_state"
    public var cameraID: Int64
    public var state: String
    public var reason: String?
    public var since90k: Int64
    enum CodingKeys: String, CodingKey {
        case cameraID = "camera_id"
        case state, reason, since90k
    }
    public init(cameraID: Int64, state: String, reason: String?, since90k: Int64) {
        self.cameraID = cameraID
        self.state = state
        self.reason = reason
        self.since90k = since90k
    }
}

extension IndexDatabase {
    public func cameraState(cameraID: Int64) throws -> CameraStateRecord? {
        try pool.read { try CameraStateRecord.fetchOne($0, key: cameraID) }
    }
}
