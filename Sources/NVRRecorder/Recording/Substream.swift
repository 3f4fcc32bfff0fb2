import Foundation
import Logging
import NVRMedia
import NVRPluginHost
import NVRTime
import NVRWorker
import Synchronization

/// A camera's sub-stream, read beside the recording connection on a thread of its own (it
/// reconnects on its own; the main stream is never touched). It feeds the grid's live view —
/// a small picture costs browsers and phones far less, and a camera whose main stream is
/// H.265 usually has an H.264 sub-stream every browser plays — and, when motion detection is
/// on, the detector: a small picture decodes for a fraction of the main stream's cost, so
/// every frame can be looked at.
final class Substream: @unchecked Sendable {
    // @unchecked Sendable: what is not immutable is used by the worker's thread only (the
    // plugin instance's functions may be called from any thread, per the ABI).
    private let cameraName: String
    private let instance: PluginInstance
    private let tracker: EventTracker
    /// What it looks for: motion settings (nil: motion is not detected here) and the camera's
    /// detection settings. Changed from other threads through `update`; the reading thread
    /// takes the change at its next packet (`changed` spares it the lock).
    private let looks: Mutex<(motion: MotionSettings?, detect: DetectSettings)>
    private let changed = Atomic<Bool>(false)
    /// The camera's object detection for these detection settings (nil: off), asked for each
    /// time a motion detector is made.
    private let detection: @Sendable (DetectSettings) -> ObjectDetection?
    private let live: LiveHub
    private let monitor: MotionMonitor?
    private let logger: Logger
    private let interrupter = Interrupter()
    private let worker: Worker
    private let opener: any LiveInputOpener

    init(
        cameraName: String, instance: PluginInstance, tracker: EventTracker, motion settings: MotionSettings?,
        detect: DetectSettings = DetectSettings(),
        detection: @escaping @Sendable (DetectSettings) -> ObjectDetection? = { _ in nil }, live: LiveHub,
        monitor: MotionMonitor? = nil, logger: Logger,
        opener: any LiveInputOpener = LiveInputs.Network()
    ) {
        self.opener = opener
        self.cameraName = cameraName
        self.instance = instance
        self.tracker = tracker
        looks = Mutex((settings, detect))
        self.detection = detection
        self.live = live
        self.monitor = monitor
        self.logger = logger
        worker = Worker(name: "sub-stream \(cameraName)")
    }

    func start() { worker.start { [self] in run() } }

    /// New settings (motion nil: off here), from any thread: when what it looks for changed,
    /// the detector is made anew at the next packet, without reconnecting. (Settings are
    /// offered to every camera whenever any camera changes.)
    func update(motion: MotionSettings?, detect: DetectSettings) {
        let differ = looks.withLock { l -> Bool in
            guard motion != l.motion || detect != l.detect else { return false }
            l = (motion, detect)
            return true
        }
        if differ { changed.store(true, ordering: .releasing) }
    }

    /// A motion detector for the settings in force, looking for objects too when the camera
    /// detects them (nil: motion off, or the stream cannot be looked at).
    private func makeDetector(_ video: StreamDescription) -> MotionDetector? {
        let (motion, detect) = looks.withLock { $0 }
        guard let s = motion else { return nil }
        do {
            let d = try MotionDetector(stream: video, settings: s)
            if let od = detection(detect) { d.onLook = { od.look($0, region: $1, at: $2) } }
            d.monitor = monitor
            return d
        } catch {
            logger.warning("camera \(cameraName): motion detection on the sub-stream off: \(error)")
            return nil
        }
    }

    func stop() { worker.stop { interrupter.stop() } }

    private var isStopping: Bool { worker.isStopping }

    private func run() {
        var backoff = 1.0
        var lastError = ""
        while !isStopping {
            var detector: MotionDetector?
            do {
                let input = try opener.open(try instance.liveSource(substream: true), interrupter: interrupter)
                defer { input.close() }
                guard let video = input.streams.first, video.codec.isVideo else {
                    throw MediaError(.unsupported, "no video in the sub-stream")
                }
                live.begin(streams: [video])
                defer { live.end() }
                changed.store(false, ordering: .relaxed)
                detector = makeDetector(video)
                if let d = detector {
                    logger.info(
                        "camera \(cameraName): motion detection on the sub-stream (\(video.summary), \(d.keyFramesOnly ? "key frames" : "\(d.settings.fps) looks/s"))"
                    )
                } else {
                    logger.info("camera \(cameraName): sub-stream \(video.summary) for the live grid")
                }
                backoff = 1
                var clock = CaptureClock()
                let tb = Timebase(video.timebaseNum, video.timebaseDen)
                let live = self.live
                live.paceWhileUnwatched(input)
                while true {
                    try input.read { p in
                        guard p.stream == 0 else { return }
                        let raw = p.dts != Int64.min ? p.dts : p.pts
                        guard raw != Int64.min, let media = tb.to90k(raw) else { return }  // no usable time: not used
                        live.append(
                            dts: media, pts: p.pts != Int64.min ? (tb.to90k(p.pts) ?? media) : media, isKey: p.isKey,
                            data: p.data)
                        if changed.load(ordering: .acquiring) {
                            // New settings: the motion in progress ends, a new detector starts.
                            changed.store(false, ordering: .relaxed)
                            if let f = detector?.finish() { tracker.apply(f) }
                            detector = makeDetector(video)
                        }
                        guard let d = detector else { return }
                        var jumped = false
                        let at = clock.wallTime(media: media, arrival: Time90k.now(), jumped: &jumped)
                        if let f = d.feed(p.data, isKey: p.isKey, at: at) { tracker.apply(f) }
                    }
                }
            } catch {
                if let f = detector?.finish() { tracker.apply(f) }
                if isStopping { break }
                let message = "\(error)"
                if message != lastError {
                    logger.warning("camera \(cameraName): sub-stream: \(message); retrying")
                    lastError = message
                }
            }
            worker.wait(seconds: backoff)
            backoff = min(backoff * 2, 30)
        }
    }
}
