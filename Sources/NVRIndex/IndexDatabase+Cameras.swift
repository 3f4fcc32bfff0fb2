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

    public func updateCamera(_ camera: CameraRecord) throws {
        try pool.write { try camera.update($0) }
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
