/// Turns one camera's detections, picture after picture, into tracked objects: a detection
/// that overlaps an object of the same label in the previous pictures (IoU) is that object
/// moving on. An object starts once seen twice, ends when not seen for `lost` (3) seconds, and
/// becomes stationary when it has not moved for `stationary` seconds — a parked car is not a
/// new object each time something passes it: a stationary object that ends is remembered, and
/// a detection where it stood is that object again, still stationary. Times are 90 kHz; no
/// clock of its own (tests drive it with simulated time).
public final class ObjectTracker {
    public struct Object: Sendable, Equatable {
        public var id: Int
        public var label: String
        public var start90k: Int64
        public var last90k: Int64
        /// Where it is now.
        public var box: Box
        /// Its best sighting: the highest score, the box and time it was seen with.
        public var topScore: Double
        public var bestBox: Box
        public var best90k: Int64
        public var stationary: Bool
        var hits: Int
        /// Where it was when it last moved, and when.
        var anchor: Box
        var anchor90k: Int64
    }

    public enum Change: Sendable, Equatable {
        /// Seen often enough to be believed (and not a known stationary object).
        case started(Object)
        /// Seen again; a better score or a new place.
        case updated(Object)
        /// It has not moved for a while (its event can end; it is remembered).
        case stopped(Object)
        /// Not seen for `lost` seconds (only objects that started end).
        case ended(Object)
    }

    public var matchIoU = 0.3
    public var hitsToStart = 2
    public var lost90k: Int64 = 3 * 90_000
    public var stationary90k: Int64 = 30 * 90_000
    /// How far (share of its own size) the box's centre may move and still be standing still.
    public var stillTolerance = 0.15
    /// How long a stationary object is remembered after it was last seen.
    public var remember90k: Int64 = 30 * 60 * 90_000

    public private(set) var objects: [Object] = []
    private var parked: [Object] = []
    private var nextID = 1

    public init() {}

    /// Applies one picture's detections, seen at `t`; returns what changed.
    public func update(_ detections: [Detection], at t: Int64) -> [Change] {
        var changes: [Change] = []
        var taken = Set<Int>()
        // Best matches first: each detection takes the free object it overlaps most.
        for d in detections.sorted(by: { $0.score > $1.score }) {
            var best: (index: Int, iou: Double)?
            for (i, o) in objects.enumerated() where o.label == d.label && !taken.contains(i) {
                let iou = o.box.iou(d.box)
                if iou >= matchIoU, iou > (best?.iou ?? 0) { best = (i, iou) }
            }
            if let best {
                taken.insert(best.index)
                if let c = see(index: best.index, d, at: t) { changes.append(c) }
                continue
            }
            // A known stationary object seen again where it stood.
            if let p = parked.firstIndex(where: { $0.label == d.label && $0.box.iou(d.box) >= 0.5 }) {
                var o = parked.remove(at: p)
                o.last90k = t
                o.box = d.box
                o.anchor = d.box
                o.anchor90k = t
                objects.append(o)
                taken.insert(objects.count - 1)
                continue
            }
            let o = Object(
                id: nextID, label: d.label, start90k: t, last90k: t, box: d.box, topScore: d.score, bestBox: d.box,
                best90k: t, stationary: false, hits: 1, anchor: d.box, anchor90k: t)
            nextID += 1
            objects.append(o)
            taken.insert(objects.count - 1)
            if hitsToStart <= 1 { changes.append(.started(o)) }
        }
        return changes + tick(now: t)
    }

    private func see(index i: Int, _ d: Detection, at t: Int64) -> Change? {
        var o = objects[i]
        let wasStarted = o.hits >= hitsToStart && !o.stationary
        o.hits += 1
        o.last90k = t
        o.box = d.box
        if d.score > o.topScore {
            o.topScore = d.score
            o.bestBox = d.box
            o.best90k = t
        }
        let moved = Self.distance(o.anchor, d.box) > stillTolerance
        if moved {
            o.anchor = d.box
            o.anchor90k = t
            if o.stationary {
                // It drove off: a new start.
                o.stationary = false
                o.start90k = t
                objects[i] = o
                return .started(o)
            }
        }
        objects[i] = o
        if !o.stationary, t - o.anchor90k >= stationary90k, o.hits >= hitsToStart {
            objects[i].stationary = true
            return .stopped(objects[i])
        }
        if o.hits == hitsToStart && !o.stationary { return .started(o) }
        return wasStarted ? .updated(o) : nil
    }

    /// Forgets the objects in view without ending them (their camera's connection ended and
    /// their events were closed with it); stationary objects stay remembered.
    public func forgetAll() { objects.removeAll() }

    /// Ends objects not seen for `lost` (call when no picture came: the detector's tick).
    public func tick(now t: Int64) -> [Change] {
        var changes: [Change] = []
        objects.removeAll { o in
            guard t - o.last90k >= lost90k else { return false }
            if o.stationary {
                parked.append(o)
            } else if o.hits >= hitsToStart {
                changes.append(.ended(o))
            }
            return true
        }
        parked.removeAll { t - $0.last90k >= remember90k }
        return changes
    }

    /// How far b's centre is from a's, in a's size (the larger side).
    static func distance(_ a: Box, _ b: Box) -> Double {
        let dx = (b.x + b.width / 2) - (a.x + a.width / 2)
        let dy = (b.y + b.height / 2) - (a.y + a.height / 2)
        let size = max(a.width, a.height, 1e-6)
        return (dx * dx + dy * dy).squareRoot() / size
    }
}
