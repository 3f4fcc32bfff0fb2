import GRDB

extension IndexDatabase {
    /// Adds a camera; a duplicate name is a clear error.
    @discardableResult
    public func addCamera(_ camera: CameraRecord) throws -> CameraRecord {
        try pool.write { db in
            if try CameraRecord.filter(Column("name") == camera.name).fetchCount(db) > 0 {
                throw IndexError("a camera named '\(camera.name)' already exists")
            }
            var c = camera
            try c.insert(db)
            return c
        }
    }

    public func cameras() throws -> [CameraRecord] {
        try pool.read { try CameraRecord.order(Column("name")).fetchAll($0) }
    }

    public func camera(named name: String) throws -> CameraRecord? {
        try pool.read { try CameraRecord.filter(Column("name") == name).fetchOne($0) }
    }

    /// Removes a camera row; its segments must be gone first.
    public func removeCamera(id: Int64) throws {
        try pool.write { db in
            let n = try SegmentRecord.filter(Column("camera_id") == id).fetchCount(db)
            guard n == 0 else { throw IndexError("camera still has \(n) segments") }
            _ = try CameraRecord.deleteOne(db, key: id)
        }
    }
}

/// A camera's last connection state as recorded by `nvr serve`.
public struct CameraStateRecord: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "camera_state"
    public var cameraID: Int64
    public var state: String
    public var reason: String?
    public var since90k: Int64
    enum CodingKeys: String, CodingKey { case cameraID = "camera_id", state, reason, since90k }
    public init(cameraID: Int64, state: String, reason: String?, since90k: Int64) {
        self.cameraID = cameraID; self.state = state; self.reason = reason; self.since90k = since90k
    }
}

extension IndexDatabase {
    public func setCameraState(_ s: CameraStateRecord) throws {
        try pool.write { try s.save($0) }
    }

    public func cameraState(cameraID: Int64) throws -> CameraStateRecord? {
        try pool.read { try CameraStateRecord.fetchOne($0, key: cameraID) }
    }
}
