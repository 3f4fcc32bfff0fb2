import NVRIndex
import Testing

@testable import NVRRecorder

/// Grouping events into review items, and their severity, on made-up events.
@Suite struct ReviewQueueTests {
    static let s: Int64 = 90_000

    func event(
        _ id: Int64, camera: Int64 = 1, _ start: Int64, _ end: Int64?, _ type: String = "motion",
        score: Double? = nil, zones: [String]? = nil
    ) -> EventRecord {
        EventRecord(
            id: id, cameraID: camera, start90k: start * Self.s, end90k: end.map { $0 * Self.s }, type: type,
            source: type == "motion" ? .motion : .detection, score: score, preRoll90k: 0, postRoll90k: 0,
            zones: zones)
    }

    @Test func overlappingEventsOfACameraAreOneItem() {
        var detect = DetectSettings()
        detect.alertLabels = ["person"]
        let events = [
            event(1, 0, 10), event(2, 2, 8, "person", score: 0.9), event(3, 9, 20, "person", score: 0.95),
            event(4, 30, 35),  // later: its own item
            event(5, camera: 2, 3, 6),  // another camera: its own item
            event(6, 34, nil),  // in progress, overlapping 4
        ]
        let items = ReviewQueue.group(events, now: 100 * Self.s) { detect.isAlert(type: $0.type, zones: $0.zones) }
        #expect(items.map(\.eventIDs) == [[1, 2, 3], [5], [4, 6]])
        #expect(items[0].severity == .alert && items[0].labels == ["person", "motion"])
        #expect(items[0].best.id == 3)  // the best-scored alert
        #expect(items[0].start90k == 0 && items[0].end90k == 20 * Self.s)
        #expect(items[1].severity == .detection && items[1].best.id == 5)
        #expect(items[2].end90k == nil)  // in progress
    }

    @Test func alertZonesNarrowAlerts() {
        var detect = DetectSettings()
        detect.zones = [.init(name: "driveway", points: [[0, 0], [1, 0], [1, 1]])]
        detect.alertZones = ["driveway"]
        #expect(detect.isAlert(type: "person", zones: ["driveway"]))
        #expect(!detect.isAlert(type: "person", zones: ["pavement"]))
        #expect(!detect.isAlert(type: "person", zones: nil))
        #expect(!detect.isAlert(type: "car", zones: ["driveway"]))
        detect.alertLabels = []
        #expect(!detect.isAlert(type: "person", zones: ["driveway"]))
    }
}
