import Foundation
import NVRIndex
import NVRTime

extension MQTTBridge {
    /// Events that started or ended since the last look: "new" and "end" messages on
    /// <prefix>/events, the best frame on the snapshot topics.
    func events() throws {
        let now = Time90k.now()
        let recent = try index.events(
            cameraID: nil, start90k: now - Self.window, end90k: now + 3600 * 90_000, limit: 1000)
        var names: [Int64: String]?
        func name(_ cameraID: Int64) throws -> String? {
            if names == nil {
                names = Dictionary(
                    uniqueKeysWithValues: try index.cameras(includeRemoved: true).compactMap { c in
                        c.id.map { ($0, c.name) }
                    })
            }
            return names?[cameraID]
        }
        var listed = Set<Int64>()
        for e in recent.sorted(by: { ($0.id ?? 0) < ($1.id ?? 0) }) {
            guard let id = e.id else { continue }
            listed.insert(id)
            // A different start under a known id: SQLite gave a deleted event's id to a new one.
            let isNew = published[id] != e.start90k
            guard isNew || (open[id] != nil && e.end90k != nil), let camera = try name(e.cameraID) else { continue }
            if isNew { learn(label: e.type, cameraID: e.cameraID) }
            let after = message(e, camera: camera, now: now)
            if isNew {
                published[id] = e.start90k
                var first = after
                first.withoutEnd()  // "new" never carries an end, as Frigate's
                enqueue("\(options.prefix)/events", MQTTEventMessage(type: "new", before: first, after: first).json)
                if e.end90k == nil {
                    open[id] = OpenEvent(cameraID: e.cameraID, message: first)
                } else {
                    // Started and ended between two looks: motion still goes ON, for a second.
                    if e.type == "motion" { publishRetained("\(options.prefix)/\(camera)/motion", "ON") }
                    enqueue("\(options.prefix)/events", MQTTEventMessage(type: "end", before: first, after: after).json)
                }
            } else if var before = open.removeValue(forKey: id)?.message {
                before.camera = camera  // renamed meanwhile: one name in both
                enqueue("\(options.prefix)/events", MQTTEventMessage(type: "end", before: before, after: after).json)
            }
        }
        // Open events the list no longer shows (more than 1000 newer ones, or deleted).
        for (id, o) in open where !listed.contains(id) {
            guard let e = try index.event(id: id) else {
                open[id] = nil
                continue
            }
            guard e.end90k != nil, let camera = try name(e.cameraID) else { continue }
            open[id] = nil
            var before = o.message
            before.camera = camera
            let after = message(e, camera: camera, now: now)
            enqueue("\(options.prefix)/events", MQTTEventMessage(type: "end", before: before, after: after).json)
        }
        // Forget what fell out of the window.
        for (id, start) in published where start < now - Self.window - 3600 * 90_000 && open[id] == nil {
            published[id] = nil
        }
    }

    /// The event as a message. Its best frame goes to <prefix>/<camera>/<label>/snapshot and
    /// <prefix>/<camera>/snapshot (retained: Home Assistant's camera entity shows the newest)
    /// now, or once its segment is complete and the broker there (`publishSnapshots`).
    private func message(_ e: EventRecord, camera: String, now: Int64) -> MQTTEventMessage.Event {
        let at = e.snapshot90k ?? e.start90k
        let shot = try? snapshots.frame(cameraID: e.cameraID, at: at, width: nil)
        if let id = e.id {
            if let shot, publishable {
                publishSnapshot(shot.jpeg, camera: camera, label: e.type)
                pendingSnapshots[id] = nil
            } else {
                pendingSnapshots[id] = PendingSnapshot(
                    cameraID: e.cameraID, camera: camera, label: e.type, at: at, until: Date(timeIntervalSinceNow: 300))
            }
        }
        let segments = try? index.segments(
            cameraID: e.cameraID, start90k: e.start90k - e.preRoll90k, end90k: e.end90k ?? now)
        return MQTTEventMessage.Event(e, camera: camera, hasClip: !(segments ?? []).isEmpty, hasSnapshot: shot != nil)
    }

    /// The snapshots that could not be published yet (the frame's segment still being
    /// written, or the broker away), for up to five minutes.
    func publishSnapshots() {
        guard publishable else { return }
        for (id, p) in pendingSnapshots {
            if let shot = try? snapshots.frame(cameraID: p.cameraID, at: p.at, width: nil) {
                publishSnapshot(shot.jpeg, camera: p.camera, label: p.label)
                pendingSnapshots[id] = nil
            } else if Date() > p.until {
                pendingSnapshots[id] = nil
            }
        }
    }

    private func publishSnapshot(_ jpeg: [UInt8], camera: String, label: String) {
        publish("\(options.prefix)/\(camera)/\(label)/snapshot", jpeg, retain: true)
        publish("\(options.prefix)/\(camera)/snapshot", jpeg, retain: true)
    }

    /// A label seen for the first time on a camera gets its entities (unless reserved).
    private func learn(label: String, cameraID: Int64) {
        guard !(labels[cameraID] ?? []).contains(label) else { return }
        labels[cameraID, default: []].insert(label)
    }
}
