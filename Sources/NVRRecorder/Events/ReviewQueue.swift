import Foundation
import NVRIndex
import NVRTime

/// One stretch of activity on one camera, to be looked at once: events of the camera that
/// overlap in time (motion, a person, a doorbell…) make one item.
public struct ReviewItem: Sendable, Equatable {
    public enum Severity: String, Codable, Sendable { case alert, detection }

    /// The id of its first event (stable while the item grows).
    public var id: Int64
    public var cameraID: Int64
    public var start90k: Int64
    /// nil while an event of it is in progress.
    public var end90k: Int64?
    /// alert: one of its events is of an alert label (and zone); detection: everything else.
    public var severity: Severity
    /// Its events' labels (types), alerts first.
    public var labels: [String]
    /// The zones its objects stood in.
    public var zones: [String]
    public var eventIDs: [Int64]
    /// The labels of its alert events (they come first in `labels`).
    var alertLabels: Set<String> = []
    /// The event that shows it best (its snapshot is the item's thumbnail, its clip the
    /// item's): the best-scored alert, else the best-scored labelled event, else the first.
    public var best: EventRecord
    public var reviewed = false
}

/// The review queue: a camera's events grouped into items (`group`), and the items of a time
/// range with one user's reviewed flags (`load`).
public enum ReviewQueue {
    /// Groups events into items, per camera: an event that starts before the item so far ends
    /// (an event in progress reaches to `now`) joins it. Items come oldest first.
    public static func group(_ events: [EventRecord], now: Int64, isAlert: (EventRecord) -> Bool) -> [ReviewItem] {
        var items: [ReviewItem] = []
        var open: [Int64: (index: Int, reach: Int64)] = [:]
        for e in events.sorted(by: { ($0.start90k, $0.id ?? 0) < ($1.start90k, $1.id ?? 0) }) {
            guard let id = e.id else { continue }
            let reach = e.end90k ?? max(now, e.start90k)
            let alert = isAlert(e)
            if let o = open[e.cameraID], e.start90k <= o.reach {
                var item = items[o.index]
                item.eventIDs.append(id)
                item.end90k = item.end90k.flatMap { end in e.end90k.map { max(end, $0) } }
                if alert {
                    item.severity = .alert
                    item.alertLabels.insert(e.type)
                }
                if !item.labels.contains(e.type) { item.labels.append(e.type) }
                item.zones = Array(Set(item.zones).union(e.zones ?? [])).sorted()
                if better(e, than: item.best, alert: alert, bestIsAlert: isAlert(item.best)) { item.best = e }
                items[o.index] = item
                open[e.cameraID] = (o.index, max(o.reach, reach))
            } else {
                items.append(
                    ReviewItem(
                        id: id, cameraID: e.cameraID, start90k: e.start90k, end90k: e.end90k,
                        severity: alert ? .alert : .detection, labels: [e.type], zones: (e.zones ?? []).sorted(),
                        eventIDs: [id], alertLabels: alert ? [e.type] : [], best: e))
                open[e.cameraID] = (items.count - 1, reach)
            }
        }
        for i in items.indices {
            let alerts = items[i].labels.filter(items[i].alertLabels.contains)
            items[i].labels = alerts + items[i].labels.filter { !items[i].alertLabels.contains($0) }
        }
        return items
    }

    static func better(_ e: EventRecord, than best: EventRecord, alert: Bool, bestIsAlert: Bool) -> Bool {
        if alert != bestIsAlert { return alert }
        let labelled = e.source != .motion
        let bestLabelled = best.source != .motion
        if labelled != bestLabelled { return labelled }
        return (e.score ?? -1) > (best.score ?? -1)
    }

    /// The items of the cameras `cameras` that overlap [start, end), with `user`'s reviewed
    /// flags: unreviewed first, alerts before detections, newest first.
    public static func load(
        index: any IndexStore, cameras: [CameraRecord], start90k: Int64, end90k: Int64, user: String,
        now: Int64 = Time90k.now()
    ) throws -> [ReviewItem] {
        var items: [ReviewItem] = []
        for c in cameras {
            guard let id = c.id else { continue }
            let detect = (try? RecordingSettings.load(cameraID: id, index: index).detect) ?? DetectSettings()
            let events = try index.events(cameraID: id, start90k: start90k, end90k: end90k, type: nil, limit: 10_000)
            items += group(events, now: now) { detect.isAlert(type: $0.type, zones: $0.zones) }
        }
        let marked = try index.reviewedEvents(user: user, among: items.flatMap(\.eventIDs))
        let until = try index.reviewedUntil(user: user)
        for i in items.indices {
            let allMarked = items[i].eventIDs.allSatisfy(marked.contains)
            let beforeWatermark = until.map { u in items[i].end90k.map { $0 <= u } ?? false } ?? false
            items[i].reviewed = allMarked || beforeWatermark
        }
        return items.sorted { a, b in
            if a.reviewed != b.reviewed { return !a.reviewed }
            if a.severity != b.severity { return a.severity == .alert }
            return (a.start90k, a.id) > (b.start90k, b.id)
        }
    }
}
