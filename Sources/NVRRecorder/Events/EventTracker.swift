import Foundation
import Logging
import NVRIndex
import NVRStorage
import NVRTime

/// One camera's events: opens, extends, merges and ends them, hands their rows to the index
/// writer, and tells the recording gate whether footage is wanted (an event, or its
/// pre/post-roll). Never waits for SQLite: packet threads ask it per packet.
///
/// Events are keyed by source and type: a second `start` of an open event extends it. A new
/// event whose clip ([start − pre, end + post]) overlaps the clip of the previous event of
/// the same key reopens that event instead: overlapping events merge. Instantaneous events
/// (`pulse`) end after a quiet period without another pulse.
public final class EventTracker: @unchecked Sendable {
    // @unchecked Sendable: all mutable state is behind `lock`; events arrive on plugin threads
    // while the packet thread asks for the recording window.
    private struct Key: Hashable {
        var source: EventRecord.Source
        var type: String
    }
    private struct Open {
        var record: EventRecord
        /// The row's id once the index writer committed it.
        var ref: PendingRowID
        /// Pulse events end here unless another pulse comes.
        var deadline90k: Int64?
        /// A higher score than any so far becomes the event's score and its snapshot time (and
        /// box, for a detection).
        mutating func note(score: Double?, box: [Double]? = nil, at t: Int64) {
            guard let score, score > (record.score ?? -1) else { return }
            record.score = score
            record.snapshot90k = t
            if let box { record.box = box }
        }
        /// Zones seen during the event add up.
        mutating func note(zones: [String]?) {
            guard let zones, !zones.isEmpty else { return }
            let all = Set(record.zones ?? []).union(zones)
            if all.count != record.zones?.count { record.zones = all.sorted() }
        }
    }

    private let cameraID: Int64
    private let cameraName: String
    private let writer: IndexWriter
    private let logger: Logger
    private let lock = NSLock()
    private var open: [Key: Open] = [:]
    /// The latest ended event per key, while its clip could still merge with a new one.
    private var recent: [Key: (record: EventRecord, ref: PendingRowID)] = [:]
    private var preRoll90k: Int64
    private var postRoll90k: Int64
    /// The event types whose clips are recorded (empty: all of them).
    private var recordOn: Set<String> = []
    /// Set when the detector that `recordOn` relies on failed: every event records again.
    private var recordOnFailed = false
    /// Called when an event starts or ends, (event, started), once its row is committed (on
    /// the index writer's callback queue, in order).
    public var onChange: (@Sendable (EventRecord, Bool) -> Void)?

    public init(camera: CameraRecord, writer: IndexWriter, logger: Logger, preRoll90k: Int64, postRoll90k: Int64) {
        cameraID = camera.id ?? 0
        cameraName = camera.name
        self.writer = writer
        self.logger = logger
        self.preRoll90k = preRoll90k
        self.postRoll90k = postRoll90k
    }

    public func setRolls(pre: Int64, post: Int64) {
        lock.withLock {
            preRoll90k = pre
            postRoll90k = post
        }
    }

    /// Only events of these types make footage wanted (`--record-on`); empty: every event.
    public func setRecordOn(_ types: Set<String>) { lock.withLock { recordOn = types } }

    /// The detector failed (no runtime, a broken model): `--record-on` falls back to every event,
    /// so the camera records on motion rather than not at all.
    public func detectorFailed() { lock.withLock { recordOnFailed = true } }

    /// Whether an event of this type makes footage wanted (called with the lock held).
    private func records(_ type: String) -> Bool { recordOn.isEmpty || recordOnFailed || recordOn.contains(type) }

    /// Starts an event (or extends the open one of the same source and type).
    public func begin(
        type: String, source: EventRecord.Source, at t: Int64, score: Double? = nil, box: [Double]? = nil,
        seen: Int64? = nil, zones: [String]? = nil, until deadline: Int64? = nil
    ) {
        lock.withLock {
            let key = Key(source: source, type: type)
            if var o = open[key] {
                if let deadline { o.deadline90k = max(o.deadline90k ?? deadline, deadline) }
                o.note(score: score, box: box, at: seen ?? t)
                o.note(zones: zones)
                open[key] = o
                return
            }
            var o: Open
            if var previous = recent[key], let end = previous.record.end90k,
                t - previous.record.preRoll90k < end + previous.record.postRoll90k
            {
                previous.record.end90k = nil  // the clips overlap: one event
                recent[key] = nil
                o = Open(record: previous.record, ref: previous.ref, deadline90k: deadline)
            } else {
                o = Open(
                    record: EventRecord(
                        cameraID: cameraID, start90k: t, type: type, source: source, snapshot90k: t,
                        preRoll90k: preRoll90k, postRoll90k: postRoll90k), ref: PendingRowID(), deadline90k: deadline)
            }
            o.note(score: score, box: box, at: seen ?? t)
            o.note(zones: zones)
            open[key] = o
            save(o, started: true)
        }
    }

    /// Ends the open event of this source and type at `t` (no-op when none is open).
    public func end(type: String, source: EventRecord.Source, at t: Int64) {
        lock.withLock { close(Key(source: source, type: type), at: t) }
    }

    /// A motion score seen at `t` while an event is open: the best one picks the snapshot.
    public func observe(
        type: String, source: EventRecord.Source, at t: Int64, score: Double, box: [Double]? = nil,
        zones: [String]? = nil
    ) {
        lock.withLock {
            let key = Key(source: source, type: type)
            guard var o = open[key] else { return }
            o.note(score: score, box: box, at: t)
            o.note(zones: zones)
            open[key] = o
        }
    }

    /// Ends pulse events whose quiet period is over; call regularly (each packet is fine).
    public func tick(now: Int64) {
        lock.withLock {
            for (key, o) in open {
                if let d = o.deadline90k, now >= d { close(key, at: d) }
            }
            // Called per packet: touch the dictionary only when something expired (no allocation).
            func expired(_ r: EventRecord) -> Bool { (r.end90k ?? now) + r.postRoll90k + r.preRoll90k <= now }
            if recent.values.contains(where: { expired($0.record) }) {
                recent = recent.filter { !expired($0.value.record) }
            }
        }
    }

    /// Ends every open event at `t` (the camera stopped or was lost).
    public func closeAll(at t: Int64) {
        lock.withLock {
            for key in Array(open.keys) { close(key, at: t) }
        }
    }

    /// Whether footage at `now` belongs to an event clip; if so, where the earliest clip that
    /// wants it starts (event start − pre-roll).
    public func clipStart(now: Int64) -> Int64? {
        lock.withLock {
            var from: Int64?
            for o in open.values where records(o.record.type) {
                from = min(from ?? .max, o.record.start90k - o.record.preRoll90k)
            }
            for r in recent.values where records(r.record.type) {
                if let end = r.record.end90k, now < end + r.record.postRoll90k {
                    from = min(from ?? .max, r.record.start90k - r.record.preRoll90k)
                }
            }
            return from
        }
    }

    /// The open events (an id is nil for the moment before its row is committed).
    public var openEvents: [EventRecord] {
        lock.withLock {
            open.values.map { o in
                var r = o.record
                r.id = o.ref.value
                return r
            }
        }
    }

    /// Closes one event; called with the lock held.
    private func close(_ key: Key, at t: Int64) {
        guard var o = open.removeValue(forKey: key) else { return }
        o.record.end90k = max(t, o.record.start90k)
        recent[key] = (o.record, o.ref)
        save(o, started: false)
    }

    /// Hands the event's row to the index writer (called with the lock held: this queues, it
    /// does not write); it is reported once the row is committed and has its id.
    private func save(_ o: Open, started: Bool) {
        let ref = o.ref
        let record = o.record
        let name = cameraName
        let logger = logger
        let onChange = onChange
        writer.submit(.saveEvent(record, ref)) {
            var e = record
            e.id = ref.value
            let what =
                started ? "started" : "ended after \(Time90k.describeDuration((e.end90k ?? e.start90k) - e.start90k))"
            logger.info("camera \(name): \(e.source.rawValue) event '\(e.type)' #\(e.id ?? 0) \(what)")
            onChange?(e, started)
        }
    }
}

extension EventTracker {
    /// Applies what the motion detector saw.
    func apply(_ finding: MotionDetector.Finding) {
        switch finding {
        case .started(let t, let score): begin(type: "motion", source: .motion, at: t, score: score)
        case .ongoing(let t, let score): observe(type: "motion", source: .motion, at: t, score: score)
        case .ended(let t): end(type: "motion", source: .motion, at: t)
        }
    }
}
