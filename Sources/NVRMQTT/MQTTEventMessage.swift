import Foundation
import NVRIndex
import NVRTime

/// A message on `<prefix>/events`, in the shape of Frigate's (its documented `frigate/events`),
/// so automations written for Frigate work: `type` new or end (no `update`: nothing about an
/// event changes in between here), and the event `before` and `after` the change. Plain motion
/// events have the label `motion`.
struct MQTTEventMessage: Encodable {
    // swift-format-ignore: AlwaysUseLowerCamelCase
    // The names are Frigate's JSON keys.
    struct Event: Encodable, Equatable {
        /// The NVR's event id, as text (Frigate's ids are text): GET /api/events/{id}.
        var id: String
        var camera: String
        var label: String
        var sub_label: String?
        var score: Double?
        var top_score: Double?
        /// Detection events: [x1, y1, x2, y2] of the object at its best sighting, normalised
        /// 0…1 (Frigate's are pixels of its detect stream); others have none.
        var box: [Double]?
        var zones: [String]
        var current_zones: [String]
        var entered_zones: [String]
        /// RFC 3339, as the API answers.
        var start: String
        var end: String?
        /// Frigate's: seconds since 1970.
        var start_time: Double
        var end_time: Double?
        /// The API's 90 kHz ticks.
        var start90k: Int64
        var end90k: Int64?
        var has_clip: Bool
        var has_snapshot: Bool
        var false_positive: Bool
        /// motion: the NVR's motion detector; detection: its object detector; plugin: the
        /// camera reported it.
        var source: String
        /// The event's clip and picture on this NVR (its API; Frigate's `snapshot` is an
        /// object of its own, so these are named apart).
        var clip_url: String
        var snapshot_url: String

        init(_ e: EventRecord, camera: String, hasClip: Bool, hasSnapshot: Bool) {
            let id = e.id ?? 0
            self.id = String(id)
            self.camera = camera
            label = e.type
            score = e.score
            top_score = e.score
            box = e.box.flatMap { b in b.count == 4 ? [b[0], b[1], b[0] + b[2], b[1] + b[3]] : nil }
            zones = e.zones ?? []
            current_zones = e.end90k == nil ? zones : []
            entered_zones = zones
            start = Time90k.rfc3339(e.start90k)
            end = e.end90k.map(Time90k.rfc3339)
            start_time = Double(e.start90k) / 90_000
            end_time = e.end90k.map { Double($0) / 90_000 }
            start90k = e.start90k
            end90k = e.end90k
            has_clip = hasClip
            has_snapshot = hasSnapshot
            false_positive = false
            source = e.source.rawValue
            clip_url = "/api/events/\(id)/clip.mp4"
            snapshot_url = "/api/events/\(id)/snapshot.jpg"
        }

        /// As a "new" message: no end yet.
        mutating func withoutEnd() {
            end = nil
            end_time = nil
            end90k = nil
        }

        enum CodingKeys: String, CodingKey {
            case id, camera, label, sub_label, score, top_score, box, zones, current_zones, entered_zones, start, end
            case start_time, end_time, start90k, end90k, has_clip, has_snapshot, false_positive, source, clip_url
            case snapshot_url
        }

        /// Every key, with null for what is not known (templates written for Frigate test
        /// `end_time is none`; a missing key is not none).
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(id, forKey: .id)
            try c.encode(camera, forKey: .camera)
            try c.encode(label, forKey: .label)
            try c.encode(sub_label, forKey: .sub_label)
            try c.encode(score, forKey: .score)
            try c.encode(top_score, forKey: .top_score)
            try c.encode(box, forKey: .box)
            try c.encode(zones, forKey: .zones)
            try c.encode(current_zones, forKey: .current_zones)
            try c.encode(entered_zones, forKey: .entered_zones)
            try c.encode(start, forKey: .start)
            try c.encode(end, forKey: .end)
            try c.encode(start_time, forKey: .start_time)
            try c.encode(end_time, forKey: .end_time)
            try c.encode(start90k, forKey: .start90k)
            try c.encode(end90k, forKey: .end90k)
            try c.encode(has_clip, forKey: .has_clip)
            try c.encode(has_snapshot, forKey: .has_snapshot)
            try c.encode(false_positive, forKey: .false_positive)
            try c.encode(source, forKey: .source)
            try c.encode(clip_url, forKey: .clip_url)
            try c.encode(snapshot_url, forKey: .snapshot_url)
        }
    }

    var type: String
    var before: Event
    var after: Event

    var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
