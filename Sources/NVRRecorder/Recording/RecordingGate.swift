import Foundation
import Logging
import NVRIndex
import NVRMedia
import NVRStorage
import NVRTime
import Synchronization

/// Decides, packet by packet, what of a camera's stream is written: everything
/// (`continuous`), event clips only (`events`: footage waits in a pre-roll buffer until an
/// event wants it, and recording stops when the last clip's post-roll is over), or nothing
/// (`off`). Feeds the motion detector on the way, and is the one place that marks footage as
/// event footage (retention keeps it longer). Lives on the thread that delivers the camera's
/// packets (like the Segmenter it wraps).
public final class RecordingGate {
    private let camera: CameraRecord
    private let writer: IndexWriter
    public let segmenter: Segmenter
    public let tracker: EventTracker
    private let logger: Logger
    private let clock: () -> Int64
    public private(set) var settings: RecordingSettings
    private let buffer = PreRollBuffer()
    private var video: StreamDescription?
    private var videoTimebase = Timebase.ticks90k
    private var detector: MotionDetector?
    private var detectorFailed = false
    private var reportedDecodeFailure = false
    /// Set while the camera's sub-stream is watched for motion instead (Substream).
    public var motionOnSubstream = false
    /// What the motion detector (this one or the sub-stream's) sees, for the page.
    public let motionMonitor = MotionMonitor()
    /// Makes the camera's object detection when its settings turn it on (nil: the server has
    /// no detector). Set by the session before the first packet.
    public var makeObjectDetection: ((DetectSettings) -> ObjectDetection?)?
    /// The camera's object detection, once made (read from other threads for the status).
    private let detection = Mutex<ObjectDetection?>(nil)
    /// Live viewers get every video packet, recorded or not.
    public let live: LiveHub

    /// Where capture time is computed, once per video packet; the packet carries it on (the
    /// pre-roll buffer, the detector, the tracker, the segmenter).
    private var captureClock: CaptureClock
    private var lastKey90k: Int64?
    private var gop90k: Int64 = 90_000
    private var capture90k: Int64 = 0
    /// The clip start whose footage already written has been marked as event footage.
    private var markedClipFrom: Int64?
    /// Capture time of the newest video packet, recorded or not (events end there when the
    /// camera goes away).
    public var lastPacket90k: Int64? { capture90k == 0 ? nil : capture90k }

    // The mode in force, looked up at most once a second.
    private var mode: RecordingMode = .continuous
    private var modeCheckedAt: Int64 = .min
    /// Settings handed over by another thread (`offer`), taken at the next packet: the gate
    /// never reads the index itself. `offered` spares the packet path the lock until then.
    private let pending = Mutex<RecordingSettings?>(nil)
    private let offered = Atomic<Bool>(false)

    /// Totals for /metrics: frames and bytes received.
    var counters: CameraCounters { segmenter.counters }

    public init(
        camera: CameraRecord, writer: IndexWriter, segmenter: Segmenter, tracker: EventTracker,
        settings: RecordingSettings,
        logger: Logger, live: LiveHub = LiveHub(), clock: @escaping () -> Int64 = Time90k.now
    ) {
        self.camera = camera
        self.live = live
        self.writer = writer
        self.segmenter = segmenter
        self.tracker = tracker
        self.settings = settings
        self.logger = logger
        self.clock = clock
        self.captureClock = CaptureClock(settle90k: segmenter.segmentLength90k)
        live.backfill = { [unowned self] sink in newestGOP(sink) }
        tracker.setRolls(pre: settings.preRoll90k, post: settings.postRoll90k)
        applyRecordOn()
        let now = clock()
        mode = settings.mode(at: now)
        modeCheckedAt = now
        publish()
    }

    /// What the gate is doing, for status from other threads: the mode in force and where
    /// motion is looked for.
    public struct Activity: Sendable, Equatable {
        public var mode: RecordingMode
        /// off, "main stream, key frames", "main stream, every frame", "sub-stream".
        public var motion: String
        /// Whether the settings ask for object detection, and motion runs for it to look at.
        public var detect = false
        public var motionEnabled = false
    }
    private let published = Mutex(Activity(mode: .continuous, motion: "off"))
    public var activity: Activity { published.withLock { $0 } }

    private func publish() {
        let motion =
            !settings.motionEnabled || mode == .off
            ? "off"
            : motionOnSubstream
                ? "sub-stream"
                : detector.map { $0.keyFramesOnly ? "main stream, key frames" : "main stream, every frame" }
                    ?? (detectorFailed ? "failed" : "main stream")
        let a = Activity(
            mode: mode, motion: motion, detect: settings.detect.enabled, motionEnabled: settings.motionEnabled)
        published.withLock { $0 = a }
    }

    /// The newest GOP received so far, for a live view that starts being watched
    /// (LiveHub.backfill, on the thread that appends): from the segment being written, or, in
    /// events mode between events, from the pre-roll buffer. Nothing while off: the view then
    /// starts at the next key frame.
    private func newestGOP(_ sink: (LiveHub.BackfillFrame) -> Void) {
        if segmenter.isRecording {
            segmenter.newestGOP(budget: LiveHub.maxGOPBytes, sink)
            return
        }
        buffer.forEachInNewestGOP(stream: 0) { p, data in
            let raw = p.dts != .min ? p.dts : p.pts
            guard raw != .min, let d = videoTimebase.to90k(raw) else { return }
            let pts = p.pts != .min ? (videoTimebase.to90k(p.pts) ?? d) : d
            sink(LiveHub.BackfillFrame(dts: d, pts: pts, isKey: p.isKey, data: data, lengthPrefixed: false))
        }
    }

    /// A new connection's streams (video first).
    public func begin(streams: [StreamDescription]) throws {
        try end()
        try segmenter.begin(streams: streams)
        live.begin(streams: streams)
        video = streams.first
        if let v = video { videoTimebase = Timebase(v.timebaseNum, v.timebaseDen) }
        captureClock.reset()
        lastKey90k = nil
        detectorFailed = false
        reportedDecodeFailure = false
        makeDetector()
    }

    /// The connection ended: write what is open, end motion in progress, drop the buffer.
    public func end() throws {
        if let f = detector?.finish() { tracker.apply(f) }
        detector = nil  // the next connection's streams make the next one
        motionMonitor.clear()
        buffer.clear()
        live.end()
        try segmenter.end()
    }

    /// Hands new settings over from any thread (the recorder's, when the index says they
    /// changed); the packet thread takes them at its next packet.
    public func offer(_ new: RecordingSettings) {
        pending.withLock { $0 = new }
        offered.store(true, ordering: .releasing)
    }

    /// Replaces the settings (on the packet thread).
    public func apply(_ new: RecordingSettings) {
        guard new != settings else { return }
        let motionChanged =
            new.motion != settings.motion || new.motionEnabled != settings.motionEnabled
            || new.detect != settings.detect
        settings = new
        _ = ensureObjectDetection()  // made, or given the new settings (off included)
        tracker.setRolls(pre: new.preRoll90k, post: new.postRoll90k)
        applyRecordOn()
        modeCheckedAt = .min
        if motionChanged {
            detectorFailed = false
            makeDetector()
        }
        logger.info(
            "camera \(camera.name): recording settings changed (mode \(new.mode.rawValue)\(new.schedule.map { ", schedule \($0.text)" } ?? ""))"
        )
    }

    /// (Re)makes the detector for the current settings, mode and stream; a motion in progress
    /// in the old one ends here.
    private func makeDetector() {
        defer { publish() }
        if let f = detector?.finish() { tracker.apply(f) }
        if detector != nil { motionMonitor.clear() }
        detector = nil
        guard settings.motionEnabled, mode != .off, !motionOnSubstream, let v = video, !detectorFailed else { return }
        do {
            let d = try MotionDetector(stream: v, settings: settings.motion)
            if let od = ensureObjectDetection() { d.onLook = { od.look($0, region: $1, at: $2) } }
            d.monitor = motionMonitor
            detector = d
        } catch {
            detectorFailed = true
            logger.warning("camera \(camera.name): motion detection off: \(error)")
        }
    }

    /// The camera's object detection: made the first time its settings ask for it, and kept,
    /// given every later change of them (nil while they say off). From any thread: the
    /// sub-stream's asks too.
    public func objectDetection(for detect: DetectSettings) -> ObjectDetection? {
        detection.withLock { current in
            if let od = current {
                od.update(detect)
                return detect.enabled ? od : nil
            }
            guard detect.enabled else { return nil }
            current = makeObjectDetection?(detect) ?? nil
            return current
        }
    }

    /// The packet thread's: detection for the settings in force.
    func ensureObjectDetection() -> ObjectDetection? { objectDetection(for: settings.detect) }

    public var objectDetection: ObjectDetection? { detection.withLock { $0 } }

    /// What the camera list says about detection: nil when off (from any thread: it reads
    /// only what `publish` published).
    public var detectionStatus: String? {
        let a = activity
        guard a.detect else { return nil }
        guard a.motionEnabled else { return "failed: motion detection is off (detection looks where there is motion)" }
        guard let od = objectDetection else {
            return makeObjectDetection == nil ? "failed: the server has no detector" : "starting"
        }
        return od.status
    }

    /// The event types whose clips are recorded: `--record-on` while detection is on; every
    /// event when it is off (a camera set to record on people whose detection is turned off
    /// records on motion again rather than nothing).
    private func applyRecordOn() {
        tracker.setRecordOn(settings.detect.enabled ? Set(settings.detect.recordOn) : [])
    }

    /// One packet from the camera; `data` is borrowed for the call.
    public func append(stream: Int, pts: Int64, dts: Int64, duration: Int64, isKey: Bool, data: UnsafeRawBufferPointer)
        throws
    {
        let now = clock()
        counters.bytes.add(Int64(data.count), ordering: .relaxed)
        if stream == 0 {
            counters.frames.add(1, ordering: .relaxed)
            capture90k = captureTime(pts: pts, dts: dts, isKey: isKey, arrival: now)
            let raw = dts != .min ? dts : pts
            if raw != .min, let d = videoTimebase.to90k(raw) {
                live.append(dts: d, pts: pts != .min ? (videoTimebase.to90k(pts) ?? d) : d, isKey: isKey, data: data)
            }
            if let d = detector {
                if let f = d.feed(data, isKey: isKey, at: capture90k) { tracker.apply(f) }
                if d.decodeFailures > 0 && !reportedDecodeFailure {
                    reportedDecodeFailure = true  // once per connection: the detector waits for the next key frame
                    logger.warning(
                        "camera \(camera.name): motion detection cannot decode a frame; skipping to the next key frame")
                }
            }
            tracker.tick(now: capture90k)
        }
        if offered.load(ordering: .acquiring) {
            offered.store(false, ordering: .relaxed)
            if let new = pending.withLock({ s -> RecordingSettings? in
                let n = s
                s = nil
                return n
            }) {
                apply(new)
            }
        }
        if now >= modeCheckedAt + 90_000 || now < modeCheckedAt {
            let m = settings.mode(at: now)
            if m != mode {
                logger.info("camera \(camera.name): recording mode \(mode.rawValue) → \(m.rawValue)")
                let wasOff = mode == .off
                mode = m
                // Nothing is recorded while off, so nothing is looked at either.
                if m == .off || wasOff { makeDetector() } else { publish() }
            }
            modeCheckedAt = now
        }
        let clipFrom = tracker.clipStart(now: capture90k)
        markEventFootage(clipFrom: clipFrom)
        switch mode {
        case .off:
            buffer.clear()
            if segmenter.isRecording { try segmenter.end() }
        case .continuous:
            if !buffer.isEmpty { try drain(from: .min) }
            try segmenter.append(
                stream: stream, pts: pts, dts: dts, duration: duration, isKey: isKey, data: data, capture90k: capture90k
            )
        case .events:
            if let clipFrom {
                if !buffer.isEmpty { try drain(from: clipFrom) }
                try segmenter.append(
                    stream: stream, pts: pts, dts: dts, duration: duration, isKey: isKey, data: data,
                    capture90k: capture90k)
            } else {
                if segmenter.isRecording { try segmenter.end() }
                buffer.append(
                    stream: stream, pts: pts, dts: dts, duration: duration, isKey: isKey, data: data,
                    capture90k: capture90k)
                // Keep the pre-roll, plus room for events reported (or detected) after they began.
                buffer.trim(keepingFrom: capture90k - settings.preRoll90k - max(4 * 90_000, 2 * gop90k))
            }
        }
    }

    /// Event footage, marked in one place: when a clip begins (or an earlier one is wanted),
    /// the segments already written since its start — its pre-roll — are marked; while any clip
    /// wants footage, the segmenter marks each segment it writes.
    private func markEventFootage(clipFrom: Int64?) {
        segmenter.eventActive = clipFrom != nil
        guard let from = clipFrom else {
            markedClipFrom = nil
            return
        }
        guard from != markedClipFrom, let id = camera.id else { return }
        markedClipFrom = from
        writer.submit(.markEventSegments(cameraID: id, start90k: from, end90k: capture90k))
    }

    /// Writes the buffered packets from the key frame at or before `t`.
    private func drain(from t: Int64) throws {
        try buffer.drain(from: t) { p, bytes in
            try segmenter.append(
                stream: p.stream, pts: p.pts, dts: p.dts, duration: p.duration, isKey: p.isKey, data: bytes,
                capture90k: p.capture90k)
        }
    }

    /// When a video packet was captured (see CaptureClock); tracks the GOP length too.
    private func captureTime(pts: Int64, dts: Int64, isKey: Bool, arrival: Int64) -> Int64 {
        let raw = dts != Int64.min ? dts : pts
        guard raw != Int64.min, let t = videoTimebase.to90k(raw) else { return arrival }
        var jumped = false
        let capture = captureClock.wallTime(media: t, arrival: arrival, jumped: &jumped)
        if jumped { lastKey90k = nil }
        if isKey {
            if let k = lastKey90k, capture > k { gop90k = capture - k }
            lastKey90k = capture
        }
        return capture
    }
}
