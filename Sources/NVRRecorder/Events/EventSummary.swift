import Foundation
import NVRIndex
import NVRTime

/// An event as the API and the CLI show it.
public struct EventSummary: Encodable, Sendable, Equatable {
    public var id: Int64
    public var camera: String
    public var type: String
    /// What the event is of: the detector's or the camera's label (person, car, doorbell…);
    /// nil for plain motion.
    public var label: String?
    public var source: String
    public var start: String
    public var start90k: Int64
    /// nil while in progress.
    public var end: String?
    public var end90k: Int64?
    public var inProgress: Bool
    public var seconds: Double
    public var score: Double?
    public var snapshot90k: Int64?
    public var preRollSeconds: Double
    public var postRollSeconds: Double
    /// Detection events: where the object was in the snapshot, [x, y, width, height], 0…1.
    public var box: [Double]?
    /// Detection events: the camera's zones the object stood in.
    public var zones: [String]?

    public init(_ e: EventRecord, camera: String, now: Int64 = Time90k.now()) {
        id = e.id ?? 0
        self.camera = camera
        type = e.type
        label = e.source == .motion ? nil : e.type
        box = e.box
        zones = e.zones
        source = e.source.rawValue
        start = Time90k.rfc3339(e.start90k)
        start90k = e.start90k
        end = e.end90k.map(Time90k.rfc3339)
        end90k = e.end90k
        inProgress = e.end90k == nil
        seconds = Double((e.end90k ?? max(now, e.start90k)) - e.start90k) / 90_000
        score = e.score
        snapshot90k = e.snapshot90k
        preRollSeconds = Double(e.preRoll90k) / 90_000
        postRollSeconds = Double(e.postRoll90k) / 90_000
    }
}
