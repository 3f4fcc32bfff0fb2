import Foundation
import Logging
import NVRMedia

/// Motion detection on a camera's sub-stream: a small picture decodes for a fraction of the
/// main stream's cost, so every frame can be looked at. Runs on a thread of its own beside
/// the recording connection and reconnects on its own; the main stream is never touched.
final class SubstreamMotion: @unchecked Sendable {
    // @unchecked Sendable: `stopping` is guarded by `wake`; the rest is used by the thread only
    // (the plugin instance's functions may be called from any thread, per the ABI).
    private let cameraName: String
    private let instance: PluginInstance
    private let tracker: EventTracker
    private let settings: MotionSettings
    private let logger: Logger
    private let interrupter = Interrupter()
    private let wake = NSCondition()
    private var stopping = false
    private let done = DispatchSemaphore(value: 0)
    private var started = false

    init(cameraName: String, instance: PluginInstance, tracker: EventTracker, settings: MotionSettings, logger: Logger) {
        self.cameraName = cameraName
        self.instance = instance
        self.tracker = tracker
        self.settings = settings
        self.logger = logger
    }

    func start() {
        started = true
        let t = Thread { [self] in run(); done.signal() }
        t.name = "motion \(cameraName)"
        t.start()
    }

    func stop() {
        wake.lock(); stopping = true; wake.broadcast(); wake.unlock()
        interrupter.stop()
        if started { done.wait(); started = false }
    }

    private var isStopping: Bool { wake.lock(); defer { wake.unlock() }; return stopping }

    private func run() {
        var backoff = 1.0
        var lastError = ""
        while !isStopping {
            var detector: MotionDetector?
            do {
                let input = try LiveInputs.open(try instance.liveSource(substream: true), interrupter: interrupter)
                defer { input.close() }
                guard let video = input.streams.first else { throw MediaError(.unsupported, "no video in the sub-stream") }
                let d = try MotionDetector(stream: video, settings: settings)
                detector = d
                logger.info("camera \(cameraName): motion detection on the sub-stream (\(video.summary), \(d.keyFramesOnly ? "key frames" : "\(settings.fps) looks/s"))")
                backoff = 1
                var clock = CaptureClock()
                let tb = Timebase(video.timebaseNum, video.timebaseDen)
                while true {
                    try input.read { p in
                        guard p.stream == 0 else { return }
                        let raw = p.dts != Int64.min ? p.dts : p.pts
                        guard raw != Int64.min, let media = tb.to90k(raw) else { return } // no usable time: not looked at
                        var jumped = false
                        let at = clock.wallTime(media: media, arrival: Time90k.now(), jumped: &jumped)
                        if let f = d.feed(p.data, isKey: p.isKey, at: at) { tracker.apply(f) }
                    }
                }
            } catch {
                if let f = detector?.finish() { tracker.apply(f) }
                if isStopping { break }
                let message = "\(error)"
                if message != lastError { logger.warning("camera \(cameraName): motion sub-stream: \(message); retrying"); lastError = message }
            }
            wake.lock()
            let until = Date(timeIntervalSinceNow: backoff)
            while !stopping && wake.wait(until: until) {}
            wake.unlock()
            backoff = min(backoff * 2, 30)
        }
    }
}
