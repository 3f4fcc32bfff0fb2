import Foundation
import Hummingbird
import NVRAccess
import NVRIndex
import NVRRecorder
import NVRTime

/// The review queue: activity grouped into items (ReviewQueue), each user's reviewed flags,
/// marking one item or everything up to a time.
struct ReviewRoutes: IndexedRoutes {
    let index: any IndexStore

    func register(on router: Router<NVRContext>) {
        router.get("/api/review") { r, c in try await list(r, try identity(c)) }
        router.post("/api/review/reviewed") { r, c in
            let who = try identity(c)
            // Never later than now: the mark only moves forward, so a time in the future would
            // mark what has not happened yet.
            let now = Time90k.now()
            let before = min(try Query(request: r).time("before") ?? now, now)
            try await offload { [index] in try index.setReviewedUntil(user: who.name, before) }
            return try JSON.response(["reviewedUntil": Time90k.rfc3339(before)])
        }
        router.post("/api/review/{id}/reviewed") { _, c in try await mark(c) }
    }

    struct ItemJSON: Encodable {
        var id: Int64
        var camera: String
        var start: String
        var start90k: Int64
        var end: String?
        var end90k: Int64?
        var inProgress: Bool
        var severity: String
        var labels: [String]
        var zones: [String]
        var events: [Int64]
        var reviewed: Bool
        /// The best event's snapshot and clip.
        var thumbnail: String
        var clip: String
        init(_ i: ReviewItem, camera: String) {
            id = i.id
            self.camera = camera
            start = Time90k.rfc3339(i.start90k)
            start90k = i.start90k
            end = i.end90k.map(Time90k.rfc3339)
            end90k = i.end90k
            inProgress = i.end90k == nil
            severity = i.severity.rawValue
            labels = i.labels
            zones = i.zones
            events = i.eventIDs
            reviewed = i.reviewed
            thumbnail = "/api/events/\(i.best.id ?? i.id)/snapshot.jpg"
            clip = "/api/events/\(i.best.id ?? i.id)/clip.mp4"
        }
    }

    /// GET /api/review?start=&end=&camera=&severity=&reviewed=&limit= — the items overlapping
    /// the range (default: the last 24 hours) of the cameras the user may see: unreviewed
    /// first, alerts before detections, newest first.
    func list(_ r: Request, _ who: Identity) async throws -> Response {
        let q = Query(request: r)
        let end = try q.time("end") ?? Time90k.now()
        let start = try q.time("start") ?? max(Time90k.subtract(end, 86_400 * 90_000), Time90k.supported.lowerBound)
        guard end > start else { throw APIError.badRequest("end must be after start") }
        let limit = try q.int("limit", in: 1...10_000) ?? 200
        let severity = q.string("severity")
        if let severity, ReviewItem.Severity(rawValue: severity) == nil {
            throw APIError.badRequest("severity must be alert or detection")
        }
        let reviewed: Bool?
        switch q.string("reviewed") {
        case nil: reviewed = nil
        case "true": reviewed = true
        case "false": reviewed = false
        case let other?: throw APIError.badRequest("reviewed must be true or false, not '\(other.prefix(20))'")
        }
        let cameraName = q.string("camera")
        return try await offload { [index] in
            var cams = try index.cameras(includeRemoved: true).filter { who.mayView(camera: $0.name) }
            if let cameraName {
                cams = cams.filter { $0.name == cameraName }
                guard !cams.isEmpty else { throw APIError.notFound("no camera named '\(cameraName.prefix(64))'") }
            }
            let names = Dictionary(uniqueKeysWithValues: cams.compactMap { c in c.id.map { ($0, c.name) } })
            let items = try ReviewQueue.load(
                index: index, cameras: cams, start90k: start, end90k: end, user: who.name
            )
            .filter { i in
                (severity == nil || i.severity.rawValue == severity) && (reviewed == nil || i.reviewed == reviewed)
            }
            .prefix(limit)
            .compactMap { i in names[i.cameraID].map { ItemJSON(i, camera: $0) } }
            struct Out: Encodable {
                var start: String
                var start90k: Int64
                var end: String
                var end90k: Int64
                var items: [ItemJSON]
            }
            return try JSON.response(
                Out(
                    start: Time90k.rfc3339(start), start90k: start, end: Time90k.rfc3339(end), end90k: end, items: items
                ))
        }
    }

    /// POST /api/review/{id}/reviewed — marks the item holding event `id` reviewed for this
    /// user (all its events); answers the item.
    func mark(_ c: NVRContext) async throws -> Response {
        let who = try identity(c)
        let raw = c.parameters.get("id") ?? ""
        guard let id = Int64(raw) else { throw APIError.badRequest("item id '\(raw.prefix(40))' is not a number") }
        return try await offload { [index] in
            guard let e = try index.event(id: id),
                let cam = try index.cameras(includeRemoved: true).first(where: { $0.id == e.cameraID }),
                who.mayView(camera: cam.name)
            else { throw APIError.notFound("no review item \(id)") }
            // The item is among the events around it (an item longer than a day is cut there).
            let now = Time90k.now()
            let from = Time90k.subtract(e.start90k, 86_400 * 90_000)
            let to = Time90k.add(e.end90k ?? now, 86_400 * 90_000)
            guard
                var item = try ReviewQueue.load(
                    index: index, cameras: [cam], start90k: from, end90k: to, user: who.name, now: now
                ).first(where: { $0.eventIDs.contains(id) })
            else { throw APIError.notFound("no review item \(id)") }
            try index.markReviewed(user: who.name, eventIDs: item.eventIDs, at: now)
            item.reviewed = true
            return try JSON.response(ItemJSON(item, camera: cam.name))
        }
    }
}
