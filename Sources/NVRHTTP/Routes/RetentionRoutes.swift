import Foundation
import HTTPTypes
import Hummingbird
import NVRAccess
import NVRIndex
import NVRPlayback
import NVRStorage
import NVRWorker

/// Retention: the storage-wide cap and free space, per-camera limits (admin).
struct RetentionRoutes: IndexedRoutes {
    let index: any IndexStore
    let storage: StorageLayout
    let audit: AuditLog
    /// The recorder's retention (nil without a recorder: a pass of its own).
    let retention: Retention?
    /// One integrity check at a time (each reads every row and lists every file).
    let checking = OneAtATime()

    func register(on router: Router<NVRContext>) {
        router.get("/api/retention") { _, c in
            try admin(c)
            return try await offload { try JSON.response(try retentionJSON()) }
        }
        router.put("/api/retention") { r, c in try await setRetention(r, c) }
        router.post("/api/db/check") { r, c in try await checkIndex(r, c) }
        router.post("/api/retention/run") { r, c in try await runRetention(r, c) }
    }

    /// POST /api/retention/run[?dryRun=true]: one retention pass now, as `nvr retention run`;
    /// with dryRun, only what would go. In `nvr serve` it is the recorder's own pass (one at a
    /// time: a pass already running is waited for).
    func runRetention(_ r: Request, _ c: NVRContext) async throws -> Response {
        let who = try admin(c)
        let dryRun = try Query(request: r).flag("dryRun")
        let report = try await offload { [index, storage, retention] in
            try (retention ?? Retention(index: index, storage: storage, logger: .init(label: "nvr"))).enforce(
                dryRun: dryRun)
        }
        if !dryRun {
            audit.record(
                who.name, "retention.run",
                detail: ["segments": String(report.segments), "bytes": String(report.bytes)], address: c.remoteAddress)
        }
        return try JSON.response(report)
    }

    struct CheckJSON: Encodable {
        var problems: [IntegrityCheck.Problem]
        var deep: Bool
        var seconds: Double
    }

    /// POST /api/db/check[?deep=true]: `nvr db check` without repairs (those need the server
    /// stopped): rows without files, files without rows, size mismatches, unfinished rows.
    func checkIndex(_ r: Request, _ c: NVRContext) async throws -> Response {
        let who = try admin(c)
        let deep = try Query(request: r).flag("deep")
        guard checking.claim("db-check") else {
            throw APIError(.conflict, "busy", "an integrity check is running; try again when it ends")
        }
        defer { checking.release("db-check") }
        let started = monotonicSeconds()
        let problems = try await offload { [index, storage] in
            try IntegrityCheck(index: index, storage: storage, logger: .init(label: "nvr")).run(
                deep: deep, repair: false)
        }
        audit.record(who.name, "db.check", detail: ["problems": String(problems.count)], address: c.remoteAddress)
        return try JSON.response(CheckJSON(problems: problems, deep: deep, seconds: monotonicSeconds() - started))
    }

    struct RetentionJSON: Encodable {
        struct Storage: Encodable {
            var maxBytes: Int64?
            var minFreePercent: Double
            /// The file system under the storage root: its size and what is free.
            var fileSystemBytes: Int64?
            var freeBytes: Int64?
        }
        struct Camera: Encodable {
            var camera: String
            var continuousDays: Double?
            var eventDays: Double?
            var maxBytes: Int64?
            var bytes: Int64
            var segments: Int
            /// The oldest and newest footage kept.
            var oldest: String?
            var oldest90k: Int64?
            var newest: String?
            var newest90k: Int64?
        }
        var storage: Storage
        var cameras: [Camera]
    }

    func retentionJSON() throws -> RetentionJSON {
        let r = Retention(index: index, storage: storage, logger: .init(label: "nvr"))
        let s = try r.settings()
        let cams = try index.cameras().map { c -> RetentionJSON.Camera in
            let limits = try index.retention(cameraID: c.id ?? 0)
            let sum = try index.storageSummary(cameraID: c.id ?? 0)
            return .init(
                camera: c.name, continuousDays: limits?.continuousDays, eventDays: limits?.eventDays,
                maxBytes: limits?.maxBytes,
                bytes: sum.bytes, segments: sum.segments, oldest: sum.oldest90k.map(Time90k.rfc3339),
                oldest90k: sum.oldest90k, newest: sum.newest90k.map(Time90k.rfc3339), newest90k: sum.newest90k)
        }
        let fs = r.fileSystem()
        return RetentionJSON(
            storage: .init(
                maxBytes: s.rootMaxBytes, minFreePercent: s.minFreePercent, fileSystemBytes: fs?.size,
                freeBytes: fs?.free),
            cameras: cams)
    }

    struct RetentionBody: Decodable {
        struct Camera: Decodable {
            var camera: String
            var continuousDays: Patch<Double>?
            var eventDays: Patch<Double>?
            var maxBytes: Patch<Int64>?
            enum CodingKeys: String, CodingKey { case camera, continuousDays, eventDays, maxBytes }
            init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: CodingKeys.self)
                camera = try c.decode(String.self, forKey: .camera)
                continuousDays = try c.patch(.continuousDays)
                eventDays = try c.patch(.eventDays)
                maxBytes = try c.patch(.maxBytes)
            }
        }
        var maxBytes: Patch<Int64>?
        var minFreePercent: Double?
        var cameras: [Camera]?
        enum CodingKeys: String, CodingKey { case maxBytes, minFreePercent, cameras }
        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            maxBytes = try c.patch(.maxBytes)
            minFreePercent = try c.decodeIfPresent(Double.self, forKey: .minFreePercent)
            cameras = try c.decodeIfPresent([Camera].self, forKey: .cameras)
        }
    }

    /// PUT /api/retention: storage-wide cap and free space, and per-camera limits; null clears a
    /// limit, a field left out stays. Applied at the next retention pass (within a minute).
    func setRetention(_ r: Request, _ c: NVRContext) async throws -> Response {
        let who = try admin(c)
        let body = try await decode(RetentionBody.self, r, c)
        let out = try await offload { () throws -> RetentionJSON in
            if let p = body.minFreePercent, !(p.isFinite && (0...50).contains(p)) {
                throw APIError.badRequest("minFreePercent must be 0…50")
            }
            var updates: [(CameraRetention)] = []
            for cam in body.cameras ?? [] {
                guard let rec = try index.camera(named: cam.camera), let id = rec.id else {
                    throw APIError.notFound("no camera named '\(cam.camera.prefix(64))'")
                }
                var limits = try index.retention(cameraID: id) ?? CameraRetention(cameraID: id)
                for (patch, path) in [
                    (cam.continuousDays, \CameraRetention.continuousDays), (cam.eventDays, \CameraRetention.eventDays),
                ] {
                    guard let patch else { continue }
                    if case .value(let d) = patch, !(d.isFinite && d > 0) {
                        throw APIError.badRequest("days must be positive (or null for none)")
                    }
                    limits[keyPath: path] = patch.value
                }
                if let m = cam.maxBytes {
                    if case .value(let b) = m, b <= 0 {
                        throw APIError.badRequest("maxBytes must be positive (or null for none)")
                    }
                    limits.maxBytes = m.value
                }
                updates.append(limits)
            }
            var settings: [(key: String, value: String?)] = []
            if let m = body.maxBytes {
                if case .value(let b) = m, b <= 0 {
                    throw APIError.badRequest("maxBytes must be positive (or null for none)")
                }
                settings.append((RetentionSettings.rootMaxKey, m.value.map(String.init)))
            }
            if let p = body.minFreePercent { settings.append((RetentionSettings.minFreeKey, String(p))) }
            // One transaction: a GET between the writes saw the cap saved and the cameras' limits not.
            try index.saveRetention(settings: settings, cameras: updates)
            return try retentionJSON()
        }
        audit.record(
            who.name, "retention.set", detail: ["cameras": (body.cameras ?? []).map(\.camera).joined(separator: ",")],
            address: c.remoteAddress)
        return try JSON.response(out)
    }
}
