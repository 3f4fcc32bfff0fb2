import Foundation
import NVRIndex
import NVRTime

extension PostgresIndex {
    @discardableResult
    public func addCamera(_ camera: CameraRecord) throws -> CameraRecord {
        try transaction { s in
            var c = camera
            if let old = try s.fetchOne(CameraRecord.self, "SELECT * FROM camera WHERE name = ?", [.text(camera.name)])
            {
                guard old.removed90k != nil else { throw IndexError("a camera named '\(camera.name)' already exists") }
                c.id = old.id
                c.created90k = old.created90k
                c.removed90k = nil
                try s.update(c, in: "camera")
            } else {
                c.id = try s.insert(c, into: "camera")
            }
            try Self.bumpCamerasGeneration(s)
            return c
        }
    }

    public func updateCamera(_ camera: CameraRecord) throws {
        try transaction { s in
            try s.update(camera, in: "camera")
            try Self.bumpCamerasGeneration(s)
        }
    }

    public func cameras(includeRemoved: Bool) throws -> [CameraRecord] {
        try autocommit {
            try $0.fetchAll(
                CameraRecord.self,
                "SELECT * FROM camera" + (includeRemoved ? "" : " WHERE removed90k IS NULL")
                    + " ORDER BY name COLLATE \"C\"")
        }
    }

    public func camera(named name: String, includeRemoved: Bool) throws -> CameraRecord? {
        let c = try autocommit {
            try $0.fetchOne(CameraRecord.self, "SELECT * FROM camera WHERE name = ?", [.text(name)])
        }
        return includeRemoved || c?.removed90k == nil ? c : nil
    }

    public func removeCamera(id: Int64) throws {
        try transaction { s in
            let n = try s.scalar(Int64.self, "SELECT COUNT(*) FROM segment WHERE camera_id = ?", [.int(id)]) ?? 0
            guard n == 0 else { throw IndexError("camera still has \(n) segments") }
            try s.execute("DELETE FROM camera WHERE id = ?", [.int(id)])
            try Self.bumpCamerasGeneration(s)
        }
    }

    public func retireCamera(id: Int64, at time90k: Int64) throws {
        try transaction { s in
            try s.execute("UPDATE camera SET removed90k = ?, enabled = 0 WHERE id = ?", [.int(time90k), .int(id)])
            try Self.bumpCamerasGeneration(s)
        }
    }

    public func camerasGeneration() throws -> Int64 {
        try autocommit {
            try $0.scalar(
                Int64.self, "SELECT CAST(value AS BIGINT) FROM setting WHERE key = ?",
                [.text(IndexDatabase.camerasGenerationKey)]) ?? 0
        }
    }

    static func bumpCamerasGeneration(_ s: PostgresSession) throws {
        try s.execute(
            """
            INSERT INTO setting (key, value) VALUES (?, '1')
            ON CONFLICT (key) DO UPDATE SET value = (CAST(setting.value AS BIGINT) + 1)::text
            """, [.text(IndexDatabase.camerasGenerationKey)])
    }

    public func cameraState(cameraID: Int64) throws -> CameraStateRecord? {
        try autocommit {
            try $0.fetchOne(CameraStateRecord.self, "SELECT * FROM camera_state WHERE camera_id = ?", [.int(cameraID)])
        }
    }

    // MARK: Memory cards

    public func replaceCardSlices(cameraID: Int64, with slices: [CardSliceRecord]) throws {
        try transaction { s in
            try s.execute("DELETE FROM card_slice WHERE camera_id = ?", [.int(cameraID)])
            for var c in slices {
                c.id = nil
                try s.insert(c, into: "card_slice")
            }
        }
    }

    public func cardSlices(cameraID: Int64, start90k: Int64, end90k: Int64, includeOffTimeline: Bool) throws
        -> [CardSliceRecord]
    {
        try autocommit {
            try $0.fetchAll(
                CardSliceRecord.self,
                """
                SELECT * FROM card_slice WHERE camera_id = ? AND start90k < ? AND start90k >= ? AND end90k > ?
                  AND on_timeline >= ?
                ORDER BY start90k, id
                """,
                [
                    .int(cameraID), .int(end90k), .int(Time90k.subtract(start90k, 86_400 * 90_000)), .int(start90k),
                    .int(includeOffTimeline ? 0 : 1),
                ])
        }
    }

    public func setPluginStatus(cameraID: Int64, json: String, at time90k: Int64) throws {
        try autocommit {
            try $0.execute(
                """
                INSERT INTO camera_plugin_status (camera_id, status, updated90k) VALUES (?, ?, ?)
                ON CONFLICT (camera_id) DO UPDATE SET status = excluded.status, updated90k = excluded.updated90k
                """, [.int(cameraID), .text(json), .int(time90k)])
        }
    }

    public func pluginStatus(cameraID: Int64) throws -> (json: String, updated90k: Int64)? {
        try autocommit { s in
            guard
                let row = try s.run(
                    "SELECT status, updated90k FROM camera_plugin_status WHERE camera_id = ?", [.int(cameraID)]
                ).rows.first
            else { return nil }
            let (json, updated) = try row.decode((String, Int64).self)
            return (json, updated)
        }
    }

    // MARK: Kept clips

    @discardableResult
    public func addProtectedClip(_ clip: ProtectedClipRecord) throws -> ProtectedClipRecord {
        var c = clip
        c.id = try autocommit { try $0.insert(clip, into: "protected_clip") }
        return c
    }

    public func protectedClips(cameraID: Int64?) throws -> [ProtectedClipRecord] {
        try autocommit { s in
            if let cameraID {
                return try s.fetchAll(
                    ProtectedClipRecord.self,
                    "SELECT * FROM protected_clip WHERE camera_id = ? ORDER BY start90k DESC, id DESC", [.int(cameraID)]
                )
            }
            return try s.fetchAll(
                ProtectedClipRecord.self, "SELECT * FROM protected_clip ORDER BY start90k DESC, id DESC")
        }
    }

    public func protectedClip(id: Int64) throws -> ProtectedClipRecord? {
        try autocommit {
            try $0.fetchOne(ProtectedClipRecord.self, "SELECT * FROM protected_clip WHERE id = ?", [.int(id)])
        }
    }

    public func removeProtectedClip(id: Int64) throws -> Bool {
        try autocommit { try $0.run("DELETE FROM protected_clip WHERE id = ?", [.int(id)]).changed > 0 }
    }

    public func isProtected(cameraID: Int64, start90k: Int64, end90k: Int64) throws -> Bool {
        try autocommit {
            try $0.scalar(
                Bool.self,
                "SELECT EXISTS(SELECT 1 FROM protected_clip WHERE camera_id = ? AND start90k < ? AND end90k > ?)",
                [.int(cameraID), .int(end90k), .int(start90k)]) ?? false
        }
    }

    /// As IndexDatabase.unprotectedSegment: no clip marked "keep" overlaps the segment.
    static let unprotectedSegment = """
        NOT EXISTS (SELECT 1 FROM protected_clip p WHERE p.camera_id = segment.camera_id
                    AND p.start90k < segment.start90k + segment.duration90k AND p.end90k > segment.start90k)
        """

    // MARK: What was deleted

    public func recordDeleted(cameraID: Int64, _ range: Range<Int64>, reason: String, now: Int64) throws {
        guard !range.isEmpty else { return }
        let tolerance = IndexDatabase.deletedMergeTolerance90k
        try transaction { s in
            // Two nodes merging into the same span at once would each miss the other's row.
            try s.execute(
                "SELECT pg_advisory_xact_lock(?::int, ?::int)",
                [.int(PostgresLockSpace.deletedRanges), .int(cameraID & 0x7fff_ffff)])
            let touching = try s.run(
                "SELECT id, start90k, end90k FROM deleted_range WHERE camera_id = ? AND end90k >= ? AND start90k <= ?",
                [
                    .int(cameraID), .int(Time90k.subtract(range.lowerBound, tolerance)),
                    .int(Time90k.add(range.upperBound, tolerance)),
                ]
            ).rows.map { try $0.decode((Int64, Int64, Int64).self) }
            var start = range.lowerBound
            var end = range.upperBound
            for (_, s0, e0) in touching {
                start = min(start, s0)
                end = max(end, e0)
            }
            if !touching.isEmpty {
                try s.execute(
                    "DELETE FROM deleted_range WHERE id IN (\(Self.marks(touching.count)))", touching.map { .int($0.0) }
                )
            }
            try s.execute(
                "INSERT INTO deleted_range (camera_id, start90k, end90k, reason, deleted90k) VALUES (?, ?, ?, ?, ?)",
                [.int(cameraID), .int(start), .int(end), .text(reason), .int(now)])
        }
    }

    public func deletedRanges(cameraID: Int64, start90k: Int64, end90k: Int64) throws -> [Range<Int64>] {
        try autocommit { s in
            try s.run(
                "SELECT start90k, end90k FROM deleted_range WHERE camera_id = ? AND end90k > ? AND start90k < ? ORDER BY start90k",
                [.int(cameraID), .int(start90k), .int(end90k)]
            ).rows.compactMap { row in
                let (a, b) = try row.decode((Int64, Int64).self)
                return a < b ? a..<b : nil
            }
        }
    }
}

/// The first key of two-key advisory locks, by what they guard.
enum PostgresLockSpace {
    static let deletedRanges: Int64 = 1
    /// Jobs for the whole cluster, one node at a time (second key: the job).
    static let clusterJobs: Int64 = 2
}
