import Foundation
import HTTPTypes
import Hummingbird
import NVRAccess
import NVRIndex
import NVRMedia
import NVRPlayback
import NVRRecorder
import NVRTime

/// Events: the list, one event, its clip and its snapshot; an admin deletes one.
struct EventRoutes: IndexedRoutes {
    let index: any IndexStore
    let storage: StorageLayout
    let snapshots: Snapshots
    let audit: AuditLog
    let playback: PlaybackRoutes

    func register(on router: Router<NVRContext>) {
        router.get("/api/events") { r, c in try await events(r, try identity(c)) }
        router.get("/api/events/{id}") { _, c in
            let (e, cam) = try await event(c)
            return try JSON.response(EventJSON(e, camera: cam))
        }
        router.get("/api/events/{id}/clip.mp4") { r, c in try await clip(r, c) }
        router.head("/api/events/{id}/clip.mp4") { r, c in try await clip(r, c) }
        router.get("/api/events/{id}/snapshot.jpg") { r, c in try await eventSnapshot(r, c) }
        router.delete("/api/events/{id}") { _, c in
            let who = try admin(c)
            let (e, cam) = try await event(c)
            try await offload { [index] in _ = try index.deleteEvent(id: e.id ?? 0) }
            audit.record(
                who.name, "event.delete", target: String(e.id ?? 0), detail: ["camera": cam.name, "type": e.type],
                address: c.remoteAddress)
            return Response(status: .noContent)
        }
    }

    /// An event with the URLs of its clip and snapshot.
    struct EventJSON: Encodable {
        var event: EventSummary
        var clip: String
        var snapshot: String
        init(_ e: EventRecord, camera: CameraRecord) {
            event = EventSummary(e, camera: camera.name)
            clip = "/api/events/\(e.id ?? 0)/clip.mp4"
            snapshot = "/api/events/\(e.id ?? 0)/snapshot.jpg"
        }
        func encode(to encoder: any Encoder) throws {
            // Flat: the summary's fields plus the two URLs.
            try event.encode(to: encoder)
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(clip, forKey: .clip)
            try c.encode(snapshot, forKey: .snapshot)
        }
        enum Keys: String, CodingKey { case clip, snapshot }
    }

    /// GET /api/events?camera=&start=&end=&type=&label=&zone=&limit= — events overlapping the range
    /// (default: the last 24 hours), of one camera or all, oldest first; `limit` keeps the
    /// newest. `label` is `type` by its other name (an event's label is its type); `zone`: events
    /// whose object stood in that zone.
    func events(_ r: Request, _ who: Identity) async throws -> Response {
        let q = Query(request: r)
        let end = try q.time("end") ?? Time90k.now()
        let start = try q.time("start") ?? max(Time90k.subtract(end, 86_400 * 90_000), Time90k.supported.lowerBound)
        guard end > start else { throw APIError.badRequest("end must be after start") }
        let limit = try q.int("limit", in: 1...10_000) ?? 1000
        let type = q.string("type")
        let label = q.string("label")
        let zone = q.string("zone")
        if let type, let label, type != label {
            throw APIError.badRequest("type and label name the same thing; give one")
        }
        let cameraName = q.string("camera")
        return try await offload { [index] in
            let cams = Dictionary(
                uniqueKeysWithValues: try index.cameras(includeRemoved: true).compactMap { c in c.id.map { ($0, c) } })
            var cameraID: Int64?
            if let cameraName {
                guard who.mayView(camera: cameraName), let c = cams.values.first(where: { $0.name == cameraName })
                else {
                    throw APIError.notFound("no camera named '\(cameraName.prefix(64))'")
                }
                cameraID = c.id
            }
            let list = try index.events(
                cameraID: cameraID, start90k: start, end90k: end, type: type ?? label, zone: zone, limit: limit
            )
            .compactMap { e in
                cams[e.cameraID].flatMap { who.mayView(camera: $0.name) ? EventJSON(e, camera: $0) : nil }
            }
            struct Out: Encodable {
                var start: String
                var start90k: Int64
                var end: String
                var end90k: Int64
                var events: [EventJSON]
            }
            return try JSON.response(
                Out(
                    start: Time90k.rfc3339(start), start90k: start, end: Time90k.rfc3339(end), end90k: end, events: list
                ))
        }
    }

    /// The event named in the path and its camera, or 404.
    func event(_ context: NVRContext) async throws -> (EventRecord, CameraRecord) {
        let raw = context.parameters.get("id") ?? ""
        guard let id = Int64(raw) else { throw APIError.badRequest("event id '\(raw.prefix(40))' is not a number") }
        let who = context.identity
        return try await offload { [index] in
            guard let e = try index.event(id: id),
                let cam = try index.cameras(includeRemoved: true).first(where: { $0.id == e.cameraID }),
                who?.mayView(camera: cam.name) ?? false
            else {
                throw APIError.notFound("no event \(id)")
            }
            return (e, cam)
        }
    }

    /// GET/HEAD /api/events/{id}/clip.mp4 — the event's recording with its pre- and post-roll,
    /// starting at a key frame; served like view.mp4 (Range, ETag, HEAD).
    func clip(_ r: Request, _ c: NVRContext) async throws -> Response {
        let (e, _) = try await event(c)
        let range = try await offload { [index, storage] in
            do { return try EventClips.range(of: e, index: index, storage: storage) } catch is NothingRecorded {
                throw APIError(
                    .notFound, "nothing_recorded",
                    "event \(e.id!) has no recording (deleted by retention, or the camera was off)")
            }
        }
        return try await playback.mp4(r, cameraID: e.cameraID, range: range)
    }

    /// GET /api/events/{id}/snapshot.jpg[?width=W] — the frame that shows the event best; a
    /// detection's box is drawn on it.
    func eventSnapshot(_ r: Request, _ c: NVRContext) async throws -> Response {
        let (e, _) = try await event(c)
        let width = try Query(request: r).int("width", in: 16...7680)
        let at = e.snapshot90k ?? e.start90k
        let shot = try await offload { [snapshots] in
            let outline = e.box.flatMap { b in
                b.count == 4 ? JPEGEncoder.Outline(x: b[0], y: b[1], width: b[2], height: b[3]) : nil
            }
            do {
                return try snapshots.frame(cameraID: e.cameraID, at: at, width: width, outline: outline)
            } catch is NothingRecorded {
                throw APIError(
                    .notFound, "nothing_recorded", "event \(e.id!) has no recorded frame at \(Time90k.rfc3339(at))")
            }
        }
        return PlaybackRoutes.jpeg(shot, cacheControl: "private, max-age=3600")
    }
}
