import GRDB
import NVRTime

extension IndexDatabase {
    @discardableResult
    public func addProtectedClip(_ clip: ProtectedClipRecord) throws -> ProtectedClipRecord {
        try pool.write { db in
            var c = clip
            try c.insert(db)
            return c
        }
    }

    /// Clips of one camera or all, newest first.
    public func protectedClips(cameraID: Int64?) throws -> [ProtectedClipRecord] {
        try pool.read { db in
            var q = ProtectedClipRecord.order(Column("start90k").desc, Column("id").desc)
            if let cameraID { q = q.filter(Column("camera_id") == cameraID) }
            return try q.fetchAll(db)
        }
    }

    public func protectedClip(id: Int64) throws -> ProtectedClipRecord? {
        try pool.read { try ProtectedClipRecord.fetchOne($0, key: id) }
    }

    public func removeProtectedClip(id: Int64) throws -> Bool {
        try pool.write { try ProtectedClipRecord.deleteOne($0, key: id) }
    }

    /// Whether any clip marked "keep" overlaps [start, end) of a camera.
    public func isProtected(cameraID: Int64, start90k: Int64, end90k: Int64) throws -> Bool {
        try pool.read { db in
            try Bool.fetchOne(
                db,
                sql: """
                    SELECT EXISTS(SELECT 1 FROM protected_clip WHERE camera_id = ? AND start90k < ? AND end90k > ?)
                    """, arguments: [cameraID, end90k, start90k]) ?? false
        }
    }

    /// The SQL condition a segment row (alias `segment`) must meet to be deletable: no clip
    /// marked "keep" overlaps it.
    static let unprotectedSegment = """
        NOT EXISTS (SELECT 1 FROM protected_clip p WHERE p.camera_id = segment.camera_id
                    AND p.start90k < segment.start90k + segment.duration90k AND p.end90k > segment.start90k)
        """
}
