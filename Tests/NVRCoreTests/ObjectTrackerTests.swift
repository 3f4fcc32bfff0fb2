import NVRDetect
import Testing

@testable import NVRRecorder

/// The tracker on simulated time (90 kHz ticks, 5 pictures a second), and the decoders on
/// hostile outputs.
@Suite struct ObjectTrackerTests {
    static let s: Int64 = 90_000
    static let look: Int64 = 18_000  // 5 a second

    func person(_ x: Double, score: Double = 0.9, y: Double = 0.3) -> Detection {
        Detection(label: "person", score: score, box: Box(x: x, y: y, width: 0.1, height: 0.4))
    }

    @Test func aWalkerIsOneObjectFromStartToEnd() throws {
        let t = ObjectTracker()
        var changes: [ObjectTracker.Change] = []
        // Walks right 0.02 a look for 4 s: each box overlaps the one before.
        for i in 0..<20 {
            changes += t.update(
                [person(0.1 + 0.02 * Double(i), score: 0.7 + 0.01 * Double(i))], at: Int64(i) * Self.look)
        }
        let started = changes.compactMap { if case .started(let o) = $0 { o } else { nil } }
        try #require(started.count == 1)
        #expect(started[0].start90k == 0)  // the first sighting, once seen twice
        #expect(t.objects.count == 1 && t.objects[0].topScore > 0.88)
        #expect(abs(t.objects[0].bestBox.x - 0.48) < 1e-9)
        // Not seen for 3 s: it ends, at its last sighting.
        var ended = t.tick(now: 19 * Self.look + 2 * Self.s)
        #expect(ended.isEmpty)
        ended = t.tick(now: 19 * Self.look + 3 * Self.s)
        guard case .ended(let o)? = ended.first else {
            Issue.record("no end: \(ended)")
            return
        }
        #expect(o.last90k == 19 * Self.look && o.id == started[0].id)
        #expect(t.objects.isEmpty)
    }

    @Test func aSingleSightingIsNotAnObject() {
        let t = ObjectTracker()
        #expect(t.update([person(0.5)], at: 0).isEmpty)
        #expect(t.update([], at: 10 * Self.s).isEmpty)  // gone, never started: no end either
        #expect(t.objects.isEmpty)
    }

    @Test func twoPeopleApartAreTwoObjects() {
        let t = ObjectTracker()
        var started = 0
        for i in 0..<3 {
            for c in t.update([person(0.1), person(0.7)], at: Int64(i) * Self.look) {
                if case .started = c { started += 1 }
            }
        }
        #expect(started == 2 && t.objects.count == 2)
    }

    /// A parked car: stationary after 30 s; when it is seen again later (something passed and
    /// woke detection), it is the same object, not a new event; when it drives off, it starts again.
    @Test func aParkedCarIsNotANewObjectEachTime() {
        let t = ObjectTracker()
        let car = Detection(label: "car", score: 0.8, box: Box(x: 0.4, y: 0.5, width: 0.3, height: 0.2))
        var changes: [ObjectTracker.Change] = []
        for i in 0..<(35 * 5) { changes += t.update([car], at: Int64(i) * Self.look) }
        #expect(changes.filter { if case .started = $0 { true } else { false } }.count == 1)
        let stopped = changes.filter { if case .stopped = $0 { true } else { false } }
        #expect(stopped.count == 1)
        // Motion stops; the car is not looked at for 10 minutes (remembered, not ended).
        #expect(t.tick(now: 45 * Self.s).isEmpty)
        #expect(t.objects.isEmpty)
        let later = 10 * 60 * Self.s
        #expect(t.update([car], at: later).isEmpty)
        #expect(t.update([car], at: later + Self.look).isEmpty)
        #expect(t.objects.first?.stationary == true)
        // It drives off: moving, a new start.
        var moved = car
        moved.box.x += 0.1
        let drove = t.update([moved], at: later + 2 * Self.look)
        #expect(drove.contains { if case .started = $0 { true } else { false } })
    }

    @Test func cropIsASquareAroundTheMotion() {
        // Small motion in a 1280×720 picture: a square half the short side (360 px, rounded up to
        // 32: 384), centred.
        let small = ObjectDetection.crop(
            around: MotionRegion(x: 0.5, y: 0.5, width: 0.02, height: 0.05), pictureWidth: 1280, pictureHeight: 720)
        #expect(abs(small.width * 1280 - 384) < 1e-6 && abs(small.height * 720 - 384) < 1e-6)
        #expect(abs((small.x + small.width / 2) - 0.51) < 1e-6)
        // Near an edge: moved inside the picture, not cut.
        let edge = ObjectDetection.crop(
            around: MotionRegion(x: 0.98, y: 0.0, width: 0.02, height: 0.05), pictureWidth: 1280, pictureHeight: 720)
        #expect(edge.x + edge.width <= 1 + 1e-9 && edge.y >= 0)
        // Motion wider than the short side: the whole picture.
        let wide = ObjectDetection.crop(
            around: MotionRegion(x: 0, y: 0.2, width: 0.9, height: 0.3), pictureWidth: 1280, pictureHeight: 720)
        #expect(wide == MotionRegion(x: 0, y: 0, width: 1, height: 1))
    }

    @Test func hostileOutputsAreSkippedNotTrappedOn() {
        // NaN, infinite and enormous codes; a zero-size anchor; fewer values than anchors.
        let anchors: [Float] = [0, 0, 0.5, 0.5, 0.2, 0.2, 0.2, 0.2, 0, 0, 1, 1, 0, 0, 1, 1]
        let codes: [Float] = [.nan, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1e30, 0, 0, 0, 0, 0]
        let logits: [Float] = [-5, 9, -5, 9, -5, 9, -5, .infinity]
        let found = BoxDecoder.ssd(codes: codes, logits: logits, anchors: anchors, classes: 1, minScore: 0.5) { _ in "x"
        }
        #expect(found.isEmpty, "\(found)")
        #expect(BoxDecoder.ssd(codes: [], logits: [], anchors: anchors, classes: 1, minScore: 0.5) { _ in "x" }.isEmpty)
        let rows = [Float](repeating: .nan, count: 84 * 7)
        #expect(BoxDecoder.yolox(rows: rows, width: 64, height: 64, classes: 2, minScore: 0.5) { _ in "x" }.isEmpty)
        #expect(BoxDecoder.yolox(rows: [1, 2], width: 64, height: 64, classes: 2, minScore: 0.5) { _ in "x" }.isEmpty)
    }

    @Test func detectLabelsParse() throws {
        #expect(try DetectSettings.parseLabels("Person, car,person") == ["person", "car"])
        #expect(try DetectSettings.parseLabels("off").isEmpty)
        #expect(throws: (any Error).self) { try DetectSettings.parseLabels("person;rm -rf") }
        var c = RecordingSettingsChange()
        c.detect = "person"
        c.detectMinScore = 1.5
        #expect(throws: (any Error).self) { try c.apply(to: .init(cameraID: 1)) }
        c.detectMinScore = 0.7
        let r = try c.apply(to: .init(cameraID: 1))
        let s = try RecordingSettings(r)
        #expect(s.detect.labels == ["person"] && s.detect.minScore == 0.7)
        #expect(s.motionEnabled)  // motion auto: on, since detection looks where there is motion
    }

    @Test func zonesParseAndRequirementsFollowThem() throws {
        var c = RecordingSettingsChange()
        c.addZones = ["driveway=0.5,0.5 1,0.5 1,1 0.5,1"]
        c.addRequiredZones = ["Person=driveway"]
        var r = try c.apply(to: .init(cameraID: 1))
        var d = try RecordingSettings(r).detect
        #expect(d.zones.map(\.name) == ["driveway"] && d.requiredZones == ["person": ["driveway"]])
        // The bottom middle of a box decides: standing at (0.75, 0.9) is in, (0.25, 0.9) not.
        #expect(d.zones(of: [0.7, 0.2, 0.1, 0.7]) == ["driveway"])
        #expect(d.zones(of: [0.2, 0.2, 0.1, 0.7]).isEmpty)
        for bad in ["driveway", "x=0,0 1,0", "x=0,0 1,0 2,2", "bad name=0,0 1,0 1,1", "x=0,0 1,0 nan,1"] {
            var b = RecordingSettingsChange()
            b.addZones = [bad]
            #expect(throws: (any Error).self, "\(bad)") { try b.apply(to: .init(cameraID: 1)) }
        }
        var unknown = RecordingSettingsChange()
        unknown.addRequiredZones = ["car=garage"]
        #expect(throws: (any Error).self) { try unknown.apply(to: r) }
        // Removing a zone removes it from the requirements too.
        var remove = RecordingSettingsChange()
        remove.removeZones = ["driveway"]
        r = try remove.apply(to: r)
        d = try RecordingSettings(r).detect
        #expect(d.zones.isEmpty && d.requiredZones.isEmpty)
    }
}
