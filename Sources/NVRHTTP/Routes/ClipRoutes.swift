import Foundation
import HTTPTypes
import Hummingbird
import NVRAccess
import NVRIndex
import NVRTime

/// Kept clips: ranges retention never deletes, listed, added, removed and played.
struct ClipRoutes: IndexedRoutes {
    let index: any IndexStore
    let audit: AuditLog
    let playback: PlaybackRoutes

    func register(on router: Router<NVRContext>) {
        router.get("/api/clips") { r, c in
            let who = try identity(c)
            let cameraName = Query(request: r).string("camera")
            return try await offload { [index] in
                let cams = Dictionary(
                    uniqueKeysWithValues: try index.cameras(includeRemoved: true).compactMap { cam in
                        cam.id.map { ($0, cam) }
                    })
                var cameraID: Int64?
                if let cameraName {
                    guard who.mayView(camera: cameraName), let cam = cams.values.first(where: { $0.name == cameraName })
                    else {
                        throw APIError.notFound("no camera named '\(cameraName.prefix(64))'")
                    }
                    cameraID = cam.id
                }
                let clips = try index.protectedClips(cameraID: cameraID).compactMap { clip in
                    cams[clip.cameraID].flatMap { who.mayView(camera: $0.name) ? ClipJSON(clip, camera: $0.name) : nil }
                }
                return try JSON.response(["clips": clips])
            }
        }
        router.post("/api/clips") { r, c in try await addClip(r, c) }
        router.get("/api/clips/{id}") { _, c in
            let (clip, cam) = try await protectedClip(c)
            return try JSON.response(ClipJSON(clip, camera: cam.name))
        }
        router.delete("/api/clips/{id}") { _, c in
            let who = try admin(c)
            let (clip, cam) = try await protectedClip(c)
            _ = try await offload { [index] in try index.removeProtectedClip(id: clip.id ?? 0) }
            audit.record(
                who.name, "clip.remove", target: String(clip.id ?? 0), detail: ["camera": cam.name, "note": clip.note],
                address: c.remoteAddress)
            return Response(status: .noContent)
        }
        router.get("/api/clips/{id}/clip.mp4") { r, c in
            let (clip, _) = try await protectedClip(c)
            return try await playback.mp4(r, cameraID: clip.cameraID, range: clip.start90k..<clip.end90k)
        }
    }

    /// A range of recordings marked "keep": retention never deletes what it covers.
    struct ClipJSON: Encodable {
        var id: Int64, camera: String, start: String, start90k: Int64, end: String, end90k: Int64
        var event: Int64?, note: String, created: String, createdBy: String, clip: String
        init(_ c: ProtectedClipRecord, camera: String) {
            id = c.id ?? 0
            self.camera = camera
            start = Time90k.rfc3339(c.start90k)
            start90k = c.start90k
            end = Time90k.rfc3339(c.end90k)
            end90k = c.end90k
            event = c.eventID
            note = c.note
            created = Time90k.rfc3339(c.created90k)
            createdBy = c.createdBy
            clip = "/api/clips/\(id)/clip.mp4"
        }
    }

    struct AddClipBody: Decodable {
        var camera: String?
        var start: String?
        var end: String?
        /// Keep an event's clip (its pre- and post-roll included) instead of a range.
        var event: Int64?
        var note: String?
    }

    /// POST /api/clips: {"camera","start","end","note"} or {"event","note"}.
    func addClip(_ r: Request, _ c: NVRContext) async throws -> Response {
        let who = try admin(c)
        let body = try await decode(AddClipBody.self, r, c)
        let note = String((body.note ?? "").prefix(1000))
        let index = self.index
        let clip = try await offload { () throws -> (ProtectedClipRecord, String) in
            if let eventID = body.event {
                guard body.camera == nil, body.start == nil, body.end == nil else {
                    throw APIError.badRequest("give an event, or a camera with start and end")
                }
                guard let e = try index.event(id: eventID),
                    let cam = try index.cameras(includeRemoved: true).first(where: { $0.id == e.cameraID })
                else {
                    throw APIError.notFound("no event \(eventID)")
                }
                let start = Time90k.subtract(e.start90k, e.preRoll90k)
                let end = Time90k.add(e.end90k ?? Time90k.now(), e.postRoll90k)
                let made = try index.addProtectedClip(
                    ProtectedClipRecord(
                        cameraID: e.cameraID, start90k: start, end90k: max(end, start + 1), eventID: eventID,
                        note: note, created90k: Time90k.now(), createdBy: who.name))
                return (made, cam.name)
            }
            guard let name = body.camera, let s = body.start, let e = body.end else {
                throw APIError.badRequest("give camera, start and end (or an event)")
            }
            guard let cam = try index.camera(named: name, includeRemoved: true), let id = cam.id else {
                throw APIError.notFound("no camera named '\(name.prefix(64))'")
            }
            let start = try Self.time(s, "start")
            let end = try Self.time(e, "end")
            guard end > start else { throw APIError.badRequest("end must be after start") }
            let made = try index.addProtectedClip(
                ProtectedClipRecord(
                    cameraID: id, start90k: start, end90k: end, eventID: nil, note: note,
                    created90k: Time90k.now(), createdBy: who.name))
            return (made, cam.name)
        }
        audit.record(
            who.name, "clip.add", target: String(clip.0.id ?? 0),
            detail: [
                "camera": clip.1, "start": Time90k.rfc3339(clip.0.start90k), "end": Time90k.rfc3339(clip.0.end90k),
                "note": note,
            ],
            address: c.remoteAddress)
        return try JSON.response(ClipJSON(clip.0, camera: clip.1), status: .created)
    }

    /// A time from a JSON body, with the query's rules (RFC 3339 or ticks, 1970–9999).
    static func time(_ s: String, _ name: String) throws -> Int64 {
        switch Time90k.parseChecked(s) {
        case .success(let t): return t
        case .failure(let why): throw APIError.badTime("\(name)='\(s.prefix(64))' \(why)")
        }
    }

    func protectedClip(_ c: NVRContext) async throws -> (ProtectedClipRecord, CameraRecord) {
        let who = try identity(c)
        let raw = c.parameters.get("id") ?? ""
        guard let id = Int64(raw) else { throw APIError.badRequest("clip id '\(raw.prefix(40))' is not a number") }
        return try await offload { [index] in
            guard let clip = try index.protectedClip(id: id),
                let cam = try index.cameras(includeRemoved: true).first(where: { $0.id == clip.cameraID }),
                who.mayView(camera: cam.name)
            else { throw APIError.notFound("no clip \(id)") }
            return (clip, cam)
        }
    }
}
