import CNVRPlugin
import Foundation
import Logging
import NVRDetect
import NVRIndex
import NVRMedia
import NVRPlayback
import NVRPluginHost
import NVRStorage
import NVRTime
import NVRWorker
import Synchronization

/// Records one camera: one thread that connects through the camera's plugin, feeds the
/// segmenter, and reconnects forever with backoff (1 s doubling to 30 s).
public final class CameraSession: PluginCallbacks, @unchecked Sendable {
    // @unchecked Sendable: mutable state is either behind `statusLock` or the worker's lock, or touched
    // only by the session thread (or, in push mode, by the plugin's push thread while the
    // session thread waits; the two never overlap, see run()).
    public let camera: CameraRecord
    private let plugins: PluginHost
    private let index: any IndexStore
    private let writer: IndexWriter
    private let storage: StorageLayout
    let logger: Logger
    private let segmenter: Segmenter
    let gate: RecordingGate
    /// The camera's events (motion and plugin-reported).
    public let events: EventTracker
    /// Its live video for viewers: the main stream, and the sub-stream (no stream while the
    /// camera has none).
    public var live: LiveHub { gate.live }
    /// What its motion detector sees now (read by the page while someone tunes it).
    public var motion: MotionMonitor { gate.motionMonitor }
    /// Kept whether watched or not: the sub-stream is not recorded, so no file could fill it.
    public let liveSubstream = LiveHub(keepAlways: true)
    private let interrupter = Interrupter()
    private let statusLock = Mutex(CameraStatus())
    /// The plugin said "connecting" (a camera that answers again) since this connection
    /// attempt began: the backoff wait after it ends then, not when the backoff runs out.
    private var retryNow = false
    /// The session reads the plugin's live URL itself (not pushed packets): a plugin's own
    /// "connecting" then says nothing about the stream the session is reading.
    private var readsURL = false
    private var pushError: String?
    /// Push mode's RecordingProgress and video frames, touched only by the plugin's push thread.
    private var pushProgress = RecordingProgress()
    private var pushedVideoFrames: Int64 = 0
    /// Set from any plugin thread when the state left `stalled` by the plugin's word.
    private let pushProgressStale = Atomic<Bool>(false)
    /// Push mode: packets arrived in this connection (events mode may write none of them).
    private var connected = false
    /// The camera's plugin instance, kept across reconnects (card work and status use it too).
    private let instanceLock = Mutex<PluginInstance?>(nil)
    /// How many times the camera has started streaming (card sync runs after each connect).
    private let connectionCount = Atomic<Int>(0)
    private let worker: Worker
    /// The last live source was a listening one (RTMP push): listen again at once after a run.
    private var listening = false
    /// Seconds to wait before the first retry; doubles to `maxBackoff`.
    public var minBackoff: Double = 1
    public var maxBackoff: Double = 30
    /// Opens the plugin's live sources (main and sub-stream).
    let opener: any LiveInputOpener

    /// `clock`: the time packets arrive (the recording gate's capture time is derived from it).
    public init(
        camera: CameraRecord, plugins: PluginHost, writer: IndexWriter, storage: StorageLayout,
        settings: Segmenter.Settings, recording: RecordingSettings = RecordingSettings(), logger: Logger,
        freeSpace: (() -> Bool)? = nil, counters: CameraCounters = CameraCounters(),
        opener: any LiveInputOpener = LiveInputs.Network(), clock: @escaping () -> Int64 = Time90k.now,
        detector: (@Sendable () -> DetectorWorker?)? = nil
    ) {
        self.camera = camera
        self.opener = opener
        self.plugins = plugins
        self.index = writer.index
        self.writer = writer
        worker = Worker(name: "camera \(camera.name)", stackSize: 1 << 20)
        self.storage = storage
        var l = logger
        l[metadataKey: "camera"] = .string(camera.name)
        self.logger = l
        self.segmenter = Segmenter(camera: camera, storage: storage, writer: writer, settings: settings, logger: l)
        segmenter.onNoSpace = freeSpace
        segmenter.counters = counters
        events = EventTracker(
            camera: camera, writer: writer, logger: l, preRoll90k: recording.preRoll90k,
            postRoll90k: recording.postRoll90k)
        gate = RecordingGate(
            camera: camera, writer: writer, segmenter: segmenter, tracker: events, settings: recording, logger: l,
            clock: clock)
        if let detector {
            let (name, events) = (camera.name, events)
            gate.makeObjectDetection = { settings in
                detector().map { ObjectDetection(cameraName: name, events: events, worker: $0, settings: settings) }
            }
        }
        events.onChange = { [weak self] e, started in
            // A plugin that acts on events (camera-side capture) hears of them. (Footage is
            // marked as event footage by the gate.)
            if let instance = self?.pluginInstance, instance.wantsEvents {
                instance.notifyEvent(json: PluginEvent.notification(e, started: started))
            }
        }
    }

    /// Recording settings changed in the index: the gate takes them at its next packet, and
    /// the sub-stream (when motion is looked for there) makes its detector anew if they change
    /// what it looks for.
    public func offer(_ recording: RecordingSettings) {
        gate.offer(recording)
        runningSubstream.withLock { $0 }?.update(
            motion: recording.motionEnabled ? recording.motion : nil, detect: recording.detect)
    }
    /// The sub-stream of the current connection, if the camera has one (CameraSession+Substream.swift).
    let runningSubstream = Mutex<Substream?>(nil)

    public var status: CameraStatus {
        var s = statusLock.withLock { $0 }
        s.lastFrame90k = segmenter.lastFrame90k
        let a = gate.activity
        s.mode = a.mode.rawValue
        s.motion = a.motion
        s.detection = gate.detectionStatus
        return s
    }

    /// The plugin instance while the session runs (nil before the first connection attempt,
    /// after stop, or while the plugin refuses the camera's config).
    public var pluginInstance: PluginInstance? { instanceLock.withLock { $0 } }

    /// Times the camera has started streaming since the session began.
    public var connections: Int { connectionCount.load(ordering: .relaxed) }
    /// Running totals for /metrics (kept by the Recorder across this camera's sessions).
    public var counters: CameraCounters { segmenter.counters }

    /// Called after each completed segment (tests and status use it).
    public func onSegmentComplete(_ f: @escaping @Sendable (SegmentRecord) -> Void) { segmenter.onSegmentComplete = f }

    public func start() { worker.start { [self] in run() } }

    /// Stops recording and returns once the open segment is complete and in the index.
    public func stop() {
        worker.stop { interrupter.stop() }
        writer.flush()
        live.close()
        liveSubstream.close()
    }

    private var isStopping: Bool { worker.isStopping }

    private func setState(
        _ state: CameraStatus.State, _ reason: String?, log: Logger.Level? = .info, extra: String = ""
    ) {
        let changed = statusLock.withLock { s -> Bool in
            let changed = s.state != state || s.reason != reason
            if state == .streaming && s.state != .streaming && s.state != .stalled {
                connectionCount.add(1, ordering: .relaxed)
                segmenter.counters.connections.add(1, ordering: .relaxed)
            }
            s.state = state
            s.reason = reason
            if changed { s.since90k = Time90k.now() }
            return changed
        }
        guard changed else { return }
        if let log {
            logger.log(level: log, "camera \(camera.name): \(state.rawValue)\(reason.map { " (\($0))" } ?? "")\(extra)")
        }
        if let id = camera.id {
            writer.submit(
                .cameraState(
                    CameraStateRecord(cameraID: id, state: state.rawValue, reason: reason, since90k: Time90k.now())))
        }
    }

    private func run() {
        var backoff = minBackoff
        while !isStopping {
            // Only news from this attempt on ends the wait after it (cleared here, not when the
            // wait starts: the camera may come back while a start attempt is still failing).
            worker.locked { retryNow = false }
            setState(.connecting, nil, log: .debug)
            var recorded = false
            var failure: String
            var failed = false
            do {
                let plugin = try plugins.plugin(named: camera.plugin)
                let instance = try instanceLock.withLock { current in
                    if let current { return current }
                    let made = try PluginInstance(plugin: plugin, configJSON: camera.config, callbacks: self)
                    current = made
                    return made
                }
                if plugin.has(UInt64(NVR_CAP_LIVE_URL)) {
                    failure = try recordURL(instance, recorded: &recorded)
                } else if plugin.has(UInt64(NVR_CAP_LIVE_PUSH)) {
                    failure = try recordPush(instance, recorded: &recorded)
                } else {
                    throw PluginError("plugin '\(plugin.name)' offers no live video", kind: .unsupported)
                }
            } catch let e as PluginError {
                failure = e.description
                failed = e.kind != .transient
            } catch {
                failure = "\(error)"
            }
            try? gate.end()
            events.closeAll(at: gate.lastPacket90k ?? Time90k.now())
            gate.objectDetection?.reset(at: Time90k.now())
            if isStopping { break }
            if recorded { backoff = minBackoff }
            if recorded && listening && !failed {
                // The camera hung up on our listener: it may come straight back.
                setState(.lost, failure, log: .warning, extra: "; listening again")
                continue
            }
            // A listener never backs off: the failure was a pusher we refused (a wrong stream
            // key), and the right camera's push must not wait for it.
            if listening { backoff = minBackoff }
            setState(failed ? .failed : .lost, failure, log: .warning, extra: "; reconnecting in \(Int(backoff)) s")
            sleep(seconds: backoff)
            backoff = listening ? minBackoff : min(backoff * 2, maxBackoff)
        }
        // No detection results after this: the events they would open could never be closed.
        gate.objectDetection?.close()
        do { try gate.end() } catch { logger.error("camera \(camera.name): closing segment failed: \(error)") }
        events.closeAll(at: gate.lastPacket90k ?? Time90k.now())
        // Events are reported once committed: the plugin hears of their end before it goes.
        writer.flush()
        let instance = instanceLock.withLock { i -> PluginInstance? in
            let k = i
            i = nil
            return k
        }
        _ = instance  // destroyed here, after the last use
        setState(.stopped, nil)
    }

    /// Waits up to `seconds`, returning early on stop or when the plugin says the camera is
    /// back (`NVR_STATE_CONNECTING` from the plugin's own thread since the attempt began).
    private func sleep(seconds: Double) {
        worker.wait(seconds: seconds, until: { retryNow })
    }

    /// Reads the plugin's live URL until it fails; returns why it stopped.
    private func recordURL(_ instance: PluginInstance, recorded: inout Bool) throws -> String {
        worker.locked { readsURL = true }
        let source = try instance.liveSource()
        listening = source.listen == true
        if listening { setState(.connecting, "waiting for the camera to connect", log: .debug) }
        let input = try opener.open(source, interrupter: interrupter)
        defer { input.close() }
        let substream = startSubstream(instance, main: source)
        defer { stopSubstream() }
        gate.motionOnSubstream = substream != nil && gate.settings.motionEnabled
        let streams = input.streams
        statusLock.withLock { s in
            s.video = streams.first?.summary
            s.audio = streams.count > 1 ? streams[1].summary : nil
            s.fps = input.frameRate > 0 ? input.frameRate : nil
            s.bitRate = input.bitRate > 0 ? input.bitRate : nil
        }
        try gate.begin(streams: streams)
        let notes = input.notes
        statusLock.withLock { $0.notes = notes.isEmpty ? nil : notes }
        setState(
            .streaming, nil,
            extra:
                " \(streams.map(\.summary).joined(separator: ", "))\(notes.isEmpty ? "" : "; " + notes.joined(separator: "; "))"
        )
        let gate = self.gate
        // A connection that delivers bytes but no usable frames (broken RTP, a stream with
        // no key frame) would otherwise say "streaming" forever while nothing is recorded.
        var watchdog = FrameWatchdog(now: Interrupter.now())
        var progress = RecordingProgress()
        live.paceWhileUnwatched(input)
        while true {
            do {
                try input.read { p in
                    if p.stream == 0 { watchdog.saw(isKey: p.isKey) }
                    try gate.append(
                        stream: p.stream, pts: p.pts, dts: p.dts, duration: p.duration, isKey: p.isKey, data: p.data)
                }
            } catch let e as MediaError where e.kind != .write && e.kind != .noSpace {
                return listening ? "the camera stopped pushing (\(e.message))" : e.message
            }
            recorded = recorded || watchdog.frames > 0
            let now = Interrupter.now()
            if let why = watchdog.check(now: now) { return why }
            if let verdict = progress.update(
                now: now, received: Int64(watchdog.frames), dropped: segmenter.videoFramesRefused)
            {
                reportProgress(verdict)
            }
        }
    }

    /// Says `stalled` (how many frames were not recorded, why, and when the last one was) or,
    /// once frames are recorded again, `streaming`.
    private func reportProgress(_ verdict: RecordingProgress.Verdict) {
        switch verdict {
        case .recording:
            setState(.streaming, nil, extra: ": recording again")
        case .stalled(let received, let dropped):
            let why = segmenter.lastDropped?.description ?? "frames are refused"
            let last =
                segmenter.lastFrame90k.map { "last frame recorded \(Time90k.rfc3339($0))" } ?? "nothing recorded yet"
            let seconds = RecordingProgress.window / 1_000_000_000
            setState(
                .stalled, "\(dropped) of \(received) frames in \(seconds) s not recorded: \(why); \(last)",
                log: .warning)
        }
    }

    /// Lets the plugin push packets until it stops, fails, or we are stopped.
    private func recordPush(_ instance: PluginInstance, recorded: inout Bool) throws -> String {
        worker.locked {
            readsURL = false
            pushError = nil
            connected = false
        }
        pushProgress = RecordingProgress()  // before the push thread starts: it is that thread's from then on
        pushedVideoFrames = 0
        try instance.startPush()
        worker.wait(seconds: .infinity, until: { pushError != nil })
        let why = worker.locked { pushError ?? "stopped" }
        instance.stopPush()  // after this returns, no push callback runs
        recorded = connected
        return why
    }

    private func failPush(_ why: String) {
        worker.locked { pushError = why }
    }

    // MARK: PluginCallbacks

    public func pluginLog(level: Int32, message: String) {
        let l: Logger.Level =
            switch level {
            case Int32(NVR_LOG_ERROR.rawValue): .error
            case Int32(NVR_LOG_WARNING.rawValue): .warning
            case Int32(NVR_LOG_INFO.rawValue): .info
            default: .debug
            }
        logger.log(level: l, "camera \(camera.name) [\(camera.plugin)]: \(message)")
    }

    public func pluginConnectionState(_ state: Int32, reason: String?) {
        if isStopping { return }  // the plugin saying it stopped because we asked is not news
        switch UInt32(bitPattern: state) {
        case NVR_STATE_CONNECTING.rawValue:
            let url = worker.locked {
                retryNow = true
                return readsURL
            }
            // A URL camera the session is streaming stays "streaming" (or "stalled": that is the
            // session's to say): the plugin's keep-alive failing once and answering again does
            // not change the stream being read.
            if !(url && (status.state == .streaming || status.state == .stalled)) {
                setState(.connecting, reason, log: .debug)
                pushProgressStale.store(true, ordering: .relaxed)
            }
        case NVR_STATE_STREAMING.rawValue:
            // "stalled" is the session's to say, and to take back (RecordingProgress).
            if status.state != .stalled { setState(.streaming, reason) }
        case NVR_STATE_LOST_EXPECTED.rawValue: setState(.lost, reason ?? "camera went away (expected)")
        default: failPush(reason ?? "camera connection lost")
        }
    }

    public func pluginEvent(json: String) {
        do {
            let e = try PluginEvent(json: json)
            switch e.phase {
            case .start: events.begin(type: e.type, source: .plugin, at: e.time90k, score: e.score)
            case .stop: events.end(type: e.type, source: .plugin, at: e.time90k)
            case .pulse:
                events.begin(
                    type: e.type, source: .plugin, at: e.time90k, score: e.score, until: e.time90k + e.quiet90k)
            }
        } catch {
            logger.warning("camera \(camera.name) [\(camera.plugin)]: ignored an event: \(error)")
        }
    }

    public func pluginCardMedia(json: String) {
        logger.debug("camera \(camera.name): card media \(json.prefix(200))")
    }

    public func pluginBeginStreams(_ descs: [StreamDescription]) -> Int32 {
        do {
            try gate.begin(streams: descs)
        } catch {
            failPush("\(error)")
            return -1
        }
        statusLock.withLock { s in
            s.video = descs.first?.summary
            s.audio = descs.count > 1 ? descs[1].summary : nil
        }
        setState(.streaming, nil, extra: " \(descs.map(\.summary).joined(separator: ", "))")
        // A new run on the push thread: the judgement starts again with it.
        pushProgress = RecordingProgress()
        pushedVideoFrames = 0
        return 0
    }

    public func pluginPacket(_ p: InputPacket) -> Int32 {
        do {
            try gate.append(
                stream: p.stream, pts: p.pts, dts: p.dts, duration: p.duration, isKey: p.isKey, data: p.data)
            if !connected { worker.locked { connected = true } }
            // Judged here, on the plugin's one push thread (the segmenter's too).
            if pushProgressStale.load(ordering: .relaxed) {
                // The plugin said "connecting" meanwhile: a stall must be judged (and said) anew.
                pushProgressStale.store(false, ordering: .relaxed)
                pushProgress = RecordingProgress()
            }
            if p.stream == 0 { pushedVideoFrames += 1 }
            if let verdict = pushProgress.update(
                now: Interrupter.now(), received: pushedVideoFrames, dropped: segmenter.videoFramesRefused)
            {
                reportProgress(verdict)
            }
            return 0
        } catch {
            failPush("\(error)")
            return 1
        }
    }
}
