import Foundation
import NVRDetect
import NVRMedia
import NVRTime
import Synchronization

/// One camera's object detection. On the thread that decodes the camera's pictures for motion
/// (the packet thread, or the sub-stream's), it cuts out the region in motion and offers it to
/// the server's detector, `fps` times a second at most; a busy detector skips the picture (and
/// counts it), so a camera never waits. On the detector's thread, the camera's tracker turns
/// what was found into objects, and objects into events of source `detection`, one event per
/// label while any object of it is in view.
public final class ObjectDetection: @unchecked Sendable {
    // @unchecked Sendable: `settings` is a Mutex; `cropper`, `lastOffer90k` and `credit` belong to the
    // decoding thread; `tracker`, `inView`, `eventful` and `zonesSeen` to the detector's thread
    // (the slot's handler).
    private let cameraName: String
    private let events: EventTracker
    private let worker: DetectorWorker
    private var slot: DetectorSlot?
    /// The settings, and the labels as a set (made once per change, not per picture).
    private let settings: Mutex<(DetectSettings, wanted: Set<String>)>
    /// Set by `reset` (a connection ended: its objects are gone) and `close` (the camera
    /// stopped); the detector's thread acts on them before the next result.
    private let resetAt = Atomic<Int64>(.min)
    private let closed = Atomic<Bool>(false)
    private var handledResetAt: Int64 = .min
    private var cropper: RGBCropper?
    private var lastOffer90k: Int64?
    private var credit = 1.0
    private let tracker = ObjectTracker()
    private var inView: [String: Int] = [:]
    /// Objects that made (or joined) their label's event, and the zones each has stood in.
    private var eventful = Set<Int>()
    private var zonesSeen: [Int: Set<String>] = [:]

    public init(cameraName: String, events: EventTracker, worker: DetectorWorker, settings: DetectSettings) {
        self.cameraName = cameraName
        self.events = events
        self.worker = worker
        self.settings = Mutex((settings, Set(settings.labels)))
        let slot = worker.slot(camera: cameraName) { [weak self] result in self?.handle(result) }
        slot.minScore = settings.minScore
        slot.wanted = Set(settings.labels)
        self.slot = slot
        // `--record-on person` must not mean "record nothing" when there is no detector.
        worker.whenSettled { [weak events] state in
            if case .failed = state { events?.detectorFailed() }
        }
    }

    deinit { slot?.close() }

    /// New settings (from any thread when the camera's settings change).
    public func update(_ new: DetectSettings) { settings.withLock { $0 = (new, Set(new.labels)) } }

    /// The camera's connection ended: the objects in view are forgotten (their events were
    /// closed with the connection), and pictures taken before now are not looked at.
    public func reset(at t: Int64) { resetAt.store(t, ordering: .relaxed) }

    /// The camera stopped: no more pictures, and results still on their way are dropped.
    public func close() {
        closed.store(true, ordering: .relaxed)
        slot?.close()
    }

    /// What the camera list says: "person, car", "loading the model", or "failed: why"; labels
    /// the model does not know are named ("person (the model does not know unicorn)").
    public var status: String {
        switch worker.currentState {
        case .loading: return "loading the model"
        case .failed(let why): return "failed: \(why)"
        case .ready(let labels, _, _):
            let wanted = settings.withLock { $0.0.labels }
            let known = wanted.filter { labels.contains($0) }
            let missing = wanted.filter { !labels.contains($0) }
            let note =
                "the model does not know \(missing.joined(separator: ", ")) (it knows \(labels.prefix(10).joined(separator: ", ")))"
            if missing.isEmpty { return known.joined(separator: ", ") }
            return known.isEmpty ? "failed: \(note)" : "\(known.joined(separator: ", ")) (\(note))"
        }
    }

    /// A look by the motion detector: offers the region in motion, if any (decoding thread).
    func look(_ picture: Picture, region: MotionRegion?, at t: Int64) {
        guard let region, let slot else { return }
        let (s, wanted) = settings.withLock { $0 }
        guard s.enabled else { return }
        // `fps` offers a second on average, whatever the pace of the looks (a token bucket: a
        // look earns fps × the time since the last, an offer spends one; it holds two, so the
        // fraction a look earns beyond one is kept). A clock that went back starts afresh.
        if let last = lastOffer90k, t >= last {
            credit = min(2, credit + Double(t - last) / 90_000 * s.fps)
        } else {
            credit = 1
        }
        lastOffer90k = t
        guard credit >= 1 - 1e-9 else { return }
        credit -= 1
        let crop = Self.crop(around: region, pictureWidth: picture.width, pictureHeight: picture.height)
        slot.offer(at: t) { buffer, w, h in
            // The slot is the camera's while `fill` runs: the worker reads these once it is full.
            slot.minScore = s.minScore
            slot.wanted = wanted
            if cropper?.width != w || cropper?.height != h { cropper = RGBCropper(width: w, height: h) }
            guard let cropper else { throw DetectError("no cropper") }
            let cut = try cropper.crop(picture, x: crop.x, y: crop.y, w: crop.width, h: crop.height, into: buffer)
            return Box(x: cut.x, y: cut.y, width: cut.width, height: cut.height)
        }
    }

    /// The part of the picture to show the model: a square (in pixels) around the motion, half
    /// again its size, at least half the picture's short side (a model sees small objects
    /// badly, and context helps), at most the whole short side; the whole picture when the
    /// motion is wider than that.
    static func crop(around r: MotionRegion, pictureWidth pw: Int, pictureHeight ph: Int) -> MotionRegion {
        let (w, h) = (Double(max(pw, 1)), Double(max(ph, 1)))
        let short = min(w, h)
        // Rounded up to 32 pixels: the scaler is made again only when the side changes, not
        // for every pixel the motion grows by.
        let wanted = min(max(max(r.width * w, r.height * h) * 1.5, short / 2), short)
        let side = min((wanted / 32).rounded(.up) * 32, short)
        if r.width * w > side || r.height * h > side { return MotionRegion(x: 0, y: 0, width: 1, height: 1) }
        let cx = (r.x + r.width / 2) * w
        let cy = (r.y + r.height / 2) * h
        let x = min(max(cx - side / 2, 0), w - side)
        let y = min(max(cy - side / 2, 0), h - side)
        return MotionRegion(x: x / w, y: y / h, width: side / w, height: side / h)
    }

    /// What the detector found in one of this camera's pictures, or a tick (detector's thread).
    /// An object makes its label's event once it has started and stands in one of the zones
    /// its label requires (if any); the event gathers the zones its objects stood in from then on
    /// (without a requirement: from the object's start).
    private func handle(_ result: DetectorSlot.Result) {
        guard !closed.load(ordering: .relaxed) else { return }
        let reset = resetAt.load(ordering: .relaxed)
        if reset != handledResetAt {
            handledResetAt = reset
            tracker.forgetAll()
            inView = [:]
            eventful = []
            zonesSeen = [:]
        }
        if let at = result.at, at < reset { return }  // taken before the connection ended
        let changes =
            result.at.map { tracker.update(result.detections, at: $0) } ?? tracker.tick(now: Time90k.now())
        guard !changes.isEmpty else { return }
        let s = settings.withLock { $0.0 }
        for change in changes {
            switch change {
            case .started(let o), .updated(let o):
                let box = Self.array(o.box)
                let here = s.zones(of: box)
                var seen = zonesSeen[o.id, default: []]
                seen.formUnion(here)
                zonesSeen[o.id] = seen
                let required = s.requiredZones[o.label] ?? []
                if !eventful.contains(o.id) {
                    guard required.isEmpty || required.contains(where: seen.contains) else { continue }
                    eventful.insert(o.id)
                    inView[o.label, default: 0] += 1
                    // With required zones, the event starts where the object entered one.
                    let start = required.isEmpty ? o.start90k : (result.at ?? o.last90k)
                    events.begin(
                        type: o.label, source: .detection, at: start, score: o.topScore, box: Self.array(o.bestBox),
                        seen: o.best90k, zones: required.isEmpty ? seen.sorted() : here)
                } else {
                    events.observe(
                        type: o.label, source: .detection, at: o.best90k, score: o.topScore,
                        box: Self.array(o.bestBox), zones: here)
                }
            case .stopped(let o), .ended(let o):
                zonesSeen[o.id] = nil
                guard eventful.remove(o.id) != nil else { continue }
                let left = max((inView[o.label] ?? 1) - 1, 0)
                inView[o.label] = left
                if left == 0 { events.end(type: o.label, source: .detection, at: o.last90k) }
            }
        }
    }

    static func array(_ b: Box) -> [Double] {
        [b.x, b.y, b.width, b.height].map { ($0 * 10_000).rounded() / 10_000 }
    }
}
