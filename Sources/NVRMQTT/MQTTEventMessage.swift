import Foundation
import NVRIndex
import NVRTime

/// A message on `<prefix>/events`, in the shape of Frigate's (its documented `frigate/events`),
/// so automations written for Frigate work: `type` new, update or end, and the event `before`
/// and `after` the change. Plain motion events have the label `motion`.
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
        /// [x1, y1, x2, y2] in pixels for detected objects; motion events have none.
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
        /// motion: the NVR's detector; plugin: the camera reported it.
        var source: String
        /// The event's own pages on this NVR.
        var clip: String
        var snapshot: String

        init(_ e: EventRecord, camera: String, hasClip: Bool, hasSnapshot: Bool) {
            let id = e.id ?? 0
            self.id = String(id)
            self.camera = camera
            label = e.type
            score = e.score
            top_score = e.score
            zones = []
            current_zones = []
            entered_zones = []
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
            clip = "/api/events/\(id)/clip.mp4"
            snapshot = "/api/events/\(id)/snapshot.jpg"
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
