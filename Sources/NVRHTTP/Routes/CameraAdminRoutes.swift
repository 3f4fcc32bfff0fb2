import Foundation
import HTTPTypes
import Hummingbird
import NVRAccess
import NVRCameras
import NVRIndex
import NVRPlayback
import NVRPluginHost
import NVRRecorder
import NVRStorage
import NVRTime

/// Cameras changed by an admin: add, change, remove, recording settings, deleting recordings;
/// the plugins and what they find on the LAN.
struct CameraAdminRoutes: IndexedRoutes {
    let index: any IndexStore
    let storage: StorageLayout
    let plugins: PluginHost
    let recorder: Recorder?
    let audit: AuditLog

    func register(on router: Router<NVRContext>) {
        router.post("/api/cameras") { r, c in try await addCamera(r, c) }
        router.post("/api/cameras/probe") { r, c in try await probeCamera(r, c) }
        router.patch("/api/cameras/{name}") { r, c in try await changeCamera(r, c) }
        router.delete("/api/cameras/{name}") { r, c in try await removeCamera(r, c) }
        router.get("/api/cameras/{name}/config") { _, c in
            try admin(c)
            let cam = try await camera(c)
            return try JSON.response(CameraConfigJSON(cam))
        }
        router.get("/api/cameras/{name}/recording-settings") { _, c in
            let cam = try await camera(c)
            return try await offload { [index] in
                try JSON.response(try RecordingSettingsJSON(cam, try index.recordingSettings(cameraID: cam.id ?? 0)))
            }
        }
        router.put("/api/cameras/{name}/recording-settings") { r, c in try await setRecordingSettings(r, c) }
        router.delete("/api/cameras/{name}/recordings") { r, c in try await deleteRecordings(r, c) }
        // Cameras the plugins find on the LAN (admin only: it reveals the network). Blocks for
        // `seconds` while they listen.
        router.get("/api/discover") { r, c in
            try admin(c)
            let seconds = try Query(request: r).int("seconds", in: 1...Int(CameraDiscovery.maxSeconds)) ?? 3
            return try await offload { [plugins, index] in
                try JSON.response(try CameraDiscovery.run(plugins: plugins, index: index, seconds: Double(seconds)))
            }
        }
        router.get("/api/plugins") { _, c in
            _ = try identity(c)
            return try await offload { [plugins] in
                try JSON.response(["plugins": plugins.discover().map { name, result in PluginJSON(name: name, result) }]
                )
            }
        }
    }

    /// A camera's plugin and options, secrets shown as "***" (sending "***" back keeps them).
    struct CameraConfigJSON: Encodable {
        var name: String, plugin: String, enabled: Bool, options: [String: String]
        init(_ c: CameraRecord) {
            name = c.name
            plugin = c.plugin
            enabled = c.enabled
            options = Secrets.redact(config: CameraAdmin.dictionary(c.config))
        }
    }

    struct PluginJSON: Encodable {
        var name: String, version: String?, description: String?, capabilities: [String], error: String?
        /// Why the plugin's cameras cannot be talked through, as it says it.
        var noTalk: String?
        init(name: String, _ r: Result<LoadedPlugin, PluginError>) {
            self.name = name
            switch r {
            case .success(let p):
                version = p.version
                description = p.description
                capabilities = p.capabilityNames
                noTalk = p.whyNoTalk
                error = nil
            case .failure(let e):
                version = nil
                description = nil
                capabilities = []
                error = e.description
            }
        }
    }

    struct AddCameraBody: Decodable {
        var name: String
        var plugin: String
        var url: String?
        var options: [String: String]?
        var enabled: Bool?
    }

    /// POST /api/cameras: the plugin checks the config; a running server records it within
    /// a second or two.
    func addCamera(_ r: Request, _ c: NVRContext) async throws -> Response {
        let who = try admin(c)
        let body = try await decode(AddCameraBody.self, r, c)
        var config = body.options ?? [:]
        if let url = body.url {
            guard config["url"] == nil else {
                throw APIError.badRequest("give the URL once: url or options.url, not both")
            }
            config["url"] = url
        }
        let admin = cameraAdmin
        let wanted = config
        let cam = try await cameraChange {
            try admin.add(name: body.name, plugin: body.plugin, config: wanted, enabled: body.enabled ?? true)
        }
        audit.record(
            who.name, "camera.add", target: cam.name, detail: config.merging(["plugin": cam.plugin]) { a, _ in a },
            address: c.remoteAddress)
        return try await offload {
            try JSON.response(try CameraRoutes.cameraJSON(index: index, recorder: recorder, cam), status: .created)
        }
    }

    struct ProbeBody: Decodable {
        var plugin: String
        var url: String?
        var options: [String: String]?
        /// An existing camera whose secrets stand in for "***".
        var camera: String?
    }

    struct ProbeJSON: Encodable {
        var probe: ProbeResult?
        var pushes: String?
    }

    /// POST /api/cameras/probe: opens the stream these settings give for a few seconds, saving
    /// nothing (what `nvr camera probe` prints). 422 when the camera cannot be read.
    func probeCamera(_ r: Request, _ c: NVRContext) async throws -> Response {
        try admin(c)
        let body = try await decode(ProbeBody.self, r, c)
        var config = body.options ?? [:]
        if let url = body.url { config["url"] = url }
        let admin = cameraAdmin
        let wanted = config
        do {
            let outcome = try await cameraChange {
                try admin.probe(plugin: body.plugin, config: wanted, camera: body.camera)
            }
            switch outcome {
            case .stream(let p): return try JSON.response(ProbeJSON(probe: p))
            case .pushes(let why): return try JSON.response(ProbeJSON(pushes: why))
            }
        } catch let e as APIError {
            throw e
        } catch {
            throw APIError(.unprocessableContent, "probe_failed", "the camera could not be read: \(error)")
        }
    }

    struct ChangeCameraBody: Decodable {
        var name: String?
        var url: String?
        /// null removes an option; "***" keeps a secret as it is.
        var options: [String: String?]?
        var enabled: Bool?
    }

    /// PATCH /api/cameras/{name}: URL, options (secrets write-only), enabled, a new name; the
    /// camera reconnects with them within a second or two, recordings untouched.
    func changeCamera(_ r: Request, _ c: NVRContext) async throws -> Response {
        let who = try admin(c)
        let cam = try await camera(c)
        let body = try await decode(ChangeCameraBody.self, r, c)
        let change = CameraAdmin.Change(
            name: body.name, url: body.url, options: body.options ?? [:], enabled: body.enabled)
        let admin = cameraAdmin
        let updated = try await cameraChange { try admin.update(name: cam.name, change) }
        var detail: [String: String] = [:]
        if let u = body.url { detail["url"] = u }
        for (k, v) in body.options ?? [:] { detail[k] = v ?? "(removed)" }
        if let e = body.enabled { detail["enabled"] = String(e) }
        if let n = body.name { detail["name"] = n }
        audit.record(who.name, "camera.update", target: cam.name, detail: detail, address: c.remoteAddress)
        return try await offload {
            try JSON.response(try CameraRoutes.cameraJSON(index: index, recorder: recorder, updated))
        }
    }

    /// DELETE /api/cameras/{name}[?recordings=delete]: recordings are kept unless asked.
    func removeCamera(_ r: Request, _ c: NVRContext) async throws -> Response {
        let who = try admin(c)
        let cam = try await camera(c)
        let q = Query(request: r)
        let mode = q.string("recordings") ?? "keep"
        guard mode == "keep" || mode == "delete" else { throw APIError.badRequest("recordings must be keep or delete") }
        let admin = cameraAdmin
        let deleted = try await cameraChange { try admin.remove(name: cam.name, deleteRecordings: mode == "delete") }
        audit.record(
            who.name, "camera.remove", target: cam.name, detail: ["recordings": mode == "delete" ? "deleted" : "kept"],
            address: c.remoteAddress)
        struct Out: Encodable {
            var camera: String
            var recordings: String
            var segmentsDeleted: Int
        }
        return try JSON.response(
            Out(camera: cam.name, recordings: mode == "delete" ? "deleted" : "kept", segmentsDeleted: deleted))
    }

    var cameraAdmin: CameraAdmin { CameraAdmin(index: index, storage: storage, plugins: plugins) }

    /// Runs a camera change off the pool, turning CameraAdmin's refusals into 404/409/400.
    func cameraChange<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        do { return try await offload(body) } catch let e as CameraAdmin.Failure {
            switch e.kind {
            case .notFound: throw APIError.notFound(e.description)
            case .conflict: throw APIError(.conflict, "conflict", e.description)
            case .invalid: throw APIError(.badRequest, "invalid_config", e.description)
            }
        }
    }

    struct RecordingSettingsJSON: Encodable {
        var camera: String, mode: String, schedule: String?, tz: String?
        var preRollSeconds: Double, postRollSeconds: Double
        /// Whether the motion detector runs with these settings (motion auto: in events mode).
        var motionActive: Bool
        var motion: MotionSettings
        var detect: DetectSettings
        init(_ cam: CameraRecord, _ r: CameraRecordingRecord) throws {
            let s = try RecordingSettings(r)
            camera = cam.name
            mode = r.mode
            schedule = r.schedule
            tz = r.tz
            preRollSeconds = Double(r.preRoll90k) / 90_000
            postRollSeconds = Double(r.postRoll90k) / 90_000
            motionActive = s.motionEnabled
            motion = s.motion
            detect = s.detect
        }
    }

    /// PUT /api/cameras/{name}/recording-settings: what `nvr camera set` changes; fields left
    /// out stay. The recorder applies it within two seconds.
    func setRecordingSettings(_ r: Request, _ c: NVRContext) async throws -> Response {
        let who = try admin(c)
        let cam = try await camera(c)
        let change = try await decode(RecordingSettingsChange.self, r, c)
        let saved = try await offload { [index] () throws -> CameraRecordingRecord in
            let current = try index.recordingSettings(cameraID: cam.id ?? 0)
            let next: CameraRecordingRecord
            do { next = try change.apply(to: current) } catch let e as ConfigError {
                throw APIError.badRequest(e.description)
            }
            try index.setRecordingSettings(next)
            return next
        }
        audit.record(
            who.name, "camera.recording", target: cam.name,
            detail: ["mode": saved.mode, "schedule": saved.schedule ?? ""], address: c.remoteAddress)
        return try JSON.response(try RecordingSettingsJSON(cam, saved))
    }

    /// DELETE /api/cameras/{name}/recordings?start=&end=: the segments wholly inside the range
    /// (never those of a clip marked "keep").
    func deleteRecordings(_ r: Request, _ c: NVRContext) async throws -> Response {
        let who = try admin(c)
        let cam = try await camera(c)
        let range = try Query(request: r).range()
        struct Out: Encodable {
            var camera: String
            var segmentsDeleted: Int
            var bytesDeleted: Int64
            var segmentsKept: Int
        }
        let out = try await offload { [index, storage] () throws -> Out in
            let deleter = SegmentDeleter(index: index, storage: storage)
            let (doomed, kept) = try deleter.segments(
                cameraID: cam.id ?? 0, inside: range.lowerBound...range.upperBound)
            let n = try deleter.delete(doomed, reason: "user")
            return Out(
                camera: cam.name, segmentsDeleted: n, bytesDeleted: doomed.reduce(0) { $0 + $1.bytes },
                segmentsKept: kept.count)
        }
        audit.record(
            who.name, "recordings.delete", target: cam.name,
            detail: [
                "start": Time90k.rfc3339(range.lowerBound), "end": Time90k.rfc3339(range.upperBound),
                "segments": String(out.segmentsDeleted),
            ],
            address: c.remoteAddress)
        return try JSON.response(out)
    }
}
