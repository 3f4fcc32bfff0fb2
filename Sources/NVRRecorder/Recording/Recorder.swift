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

/// Runs the NVR's recording side: recovers the index, then records every enabled camera.
public final class Recorder: @unchecked Sendable {
    // @unchecked Sendable: `sessions` and `stopped` are guarded by `lock`; the urgent-pass
    // counters by the retention worker's lock; `retentionInterval` and `changePollSeconds`
    // are set before start(); `generation` is the watcher's; everything else is immutable.
    public let options: Options
    public let storage: StorageLayout
    public let index: any IndexStore
    /// Every recording-path write to the index goes through it (camera threads never wait for SQLite).
    public let writer: IndexWriter
    public let plugins: PluginHost
    private let logger: Logger
    public let retention: Retention
    /// Seconds between retention passes while recording.
    public var retentionInterval: Double = 60
    /// Seconds between looks at the index for camera changes.
    public var changePollSeconds: Double = 1
    /// The cameras generation the sessions match (watch thread only, after start).
    private var generation: Int64 = 0
    private let lock = NSLock()
    private var sessions: [String: CameraSession] = [:]
    /// Set by `stop` before it stops any camera: no session starts after it.
    private var stopped = false
    private let retentionWorker = Worker(name: "retention")
    private let watcher = Worker(name: "camera changes")
    private var serveLock: ServeLock?
    /// Which cameras this recorder may record (set before start; nil: every enabled one).
    public var ownership: (any CameraOwnership)?
    /// One reconciliation at a time: the watcher's, and an ownership change's.
    private let reconciling = NSLock()
    private var upkeep: CameraUpkeep?
    /// Cameras whose card is being synced (by the upkeep thread or an admin's request), by
    /// "card-ID" (the camera's id: a rename does not make a second claim): one sync per camera
    /// at a time, so two never copy the same gap.
    public let cardSyncs = OneAtATime()
    /// Pan, tilt and zoom for the API and MQTT: one queue of commands per camera.
    public let ptz: PTZControl
    /// Who is talking through which camera ("talk-ID"): one talker per camera.
    public let talkers = OneAtATime()
    /// The server's object detector, started when a camera first asks for it.
    private let detectorLock = Mutex<DetectorWorker?>(nil)
    /// Room kept back for the index to record deletions on a full disk.
    private let reserve: SpaceReserve

    /// A recorder on the SQLite index in its storage root.
    public convenience init(options: Options, logger: Logger) throws {
        let storage = StorageLayout(root: options.storageRoot)
        try storage.prepare()
        try self.init(options: options, index: try IndexDatabase(path: storage.indexPath), logger: logger)
    }

    /// A recorder on any index backend (tests hand it the SQLite index they also look into).
    public init(options: Options, index: any IndexStore, logger: Logger) throws {
        self.options = options
        self.logger = logger
        storage = StorageLayout(root: options.storageRoot)
        try storage.prepare()
        self.index = index
        // An index on another machine (PostgreSQL) can be unreachable while cameras record:
        // their rows wait in a journal in the storage root. SQLite's index is in the root itself.
        writer = IndexWriter(
            index: index, logger: logger,
            journal: index is IndexDatabase ? nil : IndexJournal(path: storage.indexJournalPath))
        plugins = PluginHost(directory: options.pluginsDir)
        ptz = PTZControl(plugins: plugins)
        retention = Retention(index: index, storage: storage, logger: logger)
        reserve = SpaceReserve(root: storage.root)
        writer.onNoSpace = { [weak self] in self?.askRetentionForSpace() ?? false }
        MediaLog.configure(environment: ProcessInfo.processInfo.environment)
    }

    /// Takes the storage root's serve lock (start does it too): `nvr serve` takes it before
    /// opening its HTTP port, so a second server is told the root is busy, not the port.
    public func acquireLock() throws {
        if serveLock == nil { serveLock = try ServeLock(storage: storage) }
    }

    /// Writes the rows an earlier run left in the index journal (killed or stopped while the
    /// index was unreachable): before recovery, which would remove their files, and for a node
    /// before it takes part in leasing (JournalReplay checks instead that no other writer
    /// recorded the same cameras meanwhile). Throws when the index cannot take them now.
    public func replayJournal() throws {
        guard let journal = writer.journal else { return }
        try JournalReplay.run(journal: journal, index: index, logger: logger)
    }

    /// Recovers, adds the demo camera to an empty index, and starts every enabled camera.
    public func start(addDemoIfEmpty: Bool = true) throws {
        try acquireLock()
        try replayJournal()
        // While a damaged journal set aside is there, a file without a row may be one of its rows'.
        let keep = !(writer.journal?.setAsideCopies.isEmpty ?? true)
        if keep {
            logger.warning(
                "recovery: keeping files without rows while \(writer.journal?.setAsideCopies ?? []) are there (damaged index journals set aside)"
            )
        }
        let report = try Recovery.run(index: index, storage: storage, logger: logger, keepUnindexedFiles: keep)
        let closed = try index.closeOpenEvents()
        if closed > 0 { logger.notice("recovery: closed \(closed) events left open by the last run") }
        if report.recovered + report.dropped + report.deletionsFinished + report.unindexedFiles > 0 {
            logger.notice(
                "recovery: \(report.recovered) segments finished, \(report.dropped) dropped, \(report.deletionsFinished) deletions completed, \(report.unindexedFiles) files without rows removed"
            )
        }
        if addDemoIfEmpty, try index.cameras().isEmpty {
            try index.addCamera(CameraRecord(name: "demo", plugin: "demo", config: "{}", created90k: Time90k.now()))
            logger.notice("no cameras yet: added the synthetic 'demo' camera (remove it with: nvr camera remove demo)")
        }
        logger.info(
            "storage \(storage.root), plugins from \(plugins.directory), segments of \(options.segmentSeconds) s")
        // Make room before the first write, then keep making it.
        do { try retention.enforce(dryRun: false) } catch { logger.error("retention failed: \(error)") }
        reserve.ensure()
        generation = (try? index.camerasGeneration()) ?? 0
        for camera in try index.cameras() where camera.enabled && mayRecord(camera) {
            startSession(camera)
        }
        let u = CameraUpkeep(
            options: options, writer: writer, storage: storage, cardSyncs: cardSyncs, logger: logger
        ) { [weak self] in
            self?.allSessions ?? []
        }
        upkeep = u
        u.start()
        retentionWorker.start { [self] in retentionLoop() }
        watcher.start { [self] in watchLoop() }
    }

    /// Polls the index's cameras generation (one small read a second): a camera added,
    /// changed, enabled, disabled, renamed or removed — from the API or from `nvr` in another
    /// process — is started, restarted or stopped here, while the others keep recording; and
    /// changed recording settings are handed to the running cameras' gates (which never read
    /// the index themselves).
    private func watchLoop() {
        while watcher.wait(seconds: changePollSeconds) {
            guard let g = try? index.camerasGeneration(), g != generation else { continue }
            generation = g
            do { try reconcile() } catch { logger.error("cannot apply camera changes: \(error)") }
            for s in allSessions {
                guard let id = s.camera.id else { continue }
                do { s.offer(try RecordingSettings.load(cameraID: id, index: index)) } catch {
                    logger.error("camera \(s.camera.name): cannot read recording settings: \(error)")
                }
            }
        }
    }

    /// Makes the running sessions match the enabled cameras of the index (on the watcher
    /// thread; `stop` joins it before stopping the cameras).
    func reconcile() throws {
        reconciling.lock()
        defer { reconciling.unlock() }
        let wanted = Dictionary(
            uniqueKeysWithValues: try index.cameras().filter { $0.enabled && mayRecord($0) }.compactMap { c in
                c.id.map { ($0, c) }
            })
        let outdated = lock.withLock { () -> [CameraSession] in
            let gone = sessions.values.filter { s in s.camera.id.flatMap { wanted[$0] } != s.camera }
            for s in gone { sessions[s.camera.name] = nil }
            return gone
        }
        // Stopping completes each open segment; the others record on meanwhile.
        DispatchQueue.concurrentPerform(iterations: outdated.count) { i in
            let s = outdated[i]
            let why =
                wanted[s.camera.id ?? -1] != nil
                ? "its settings changed" : mayRecord(s.camera) ? "removed or disabled" : "another node records it now"
            logger.info("camera \(s.camera.name): \(why); stopping")
            s.stop()
        }
        let running = lock.withLock { Set(sessions.values.compactMap(\.camera.id)) }
        for (id, cam) in wanted.sorted(by: { $0.value.name < $1.value.name }) where !running.contains(id) {
            logger.info("camera \(cam.name): starting")
            startSession(cam)
        }
    }

    private func mayRecord(_ camera: CameraRecord) -> Bool {
        guard let ownership, let id = camera.id else { return true }
        return ownership.mayRecord(id)
    }

    /// The cameras this recorder may record changed (a lease taken or lost): starts and stops
    /// sessions now, on the caller's thread, rather than at the next look at the index.
    ///
    /// Cameras no longer ours stop here and now, without asking the index (a node cut off from
    /// PostgreSQL must stop them before their leases can lapse); starting new ones reads the
    /// index, so it happens on another thread.
    /// Each camera stops on a thread of its own (its thread joined first, then its last writes
    /// handed over): `wait` waits for them all (a camera given up gracefully), else the caller
    /// goes on at once (the lease guard, which must stay free to act).
    public func ownershipChanged(wait: Bool = true) {
        // Lost sessions stop even while the recorder stops (a lease must never outlive them).
        let lost = lock.withLock { () -> [CameraSession] in
            let gone = sessions.values.filter { !mayRecord($0.camera) }
            for s in gone { sessions[s.camera.name] = nil }
            return gone
        }
        let group = DispatchGroup()
        for s in lost {
            logger.info("camera \(s.camera.name): another node records it now; stopping")
            group.enter()
            Thread.detachNewThread {
                s.stop()
                group.leave()
            }
        }
        if wait { group.wait() }
        DispatchQueue.global().async { [weak self] in
            guard let self, lock.withLock({ !stopped }) else { return }
            do { try reconcile() } catch { logger.error("cannot apply camera changes: \(error)") }
        }
    }

    /// Urgent passes asked for (a write failed for lack of space) and answered; what the
    /// last one freed. Guarded by the retention worker's lock.
    private var urgentAsked = 0
    private var urgentServed = 0
    private var urgentFreed = false

    /// The recorder's retention passes: periodic ones, and urgent ones for a full disk. An
    /// admin's `POST /api/retention/run` runs one more on its request's thread; `Retention`
    /// keeps passes from overlapping.
    private func retentionLoop() {
        while retentionWorker.wait(seconds: retentionInterval, until: { urgentServed != urgentAsked }) {
            let (urgent, isUrgent) = retentionWorker.locked { (urgentAsked, urgentServed != urgentAsked) }
            if isUrgent {
                let freed = freeSpaceNow()
                retentionWorker.locked {
                    urgentServed = urgent
                    urgentFreed = freed
                }
                continue
            }
            do { try retention.enforce(dryRun: false) } catch { logger.error("retention failed: \(error)") }
            reserve.ensure()
        }
    }

    /// For a camera thread whose file write, or the index writer whose commit, just failed for
    /// lack of space: asks the retention thread for an urgent pass and waits for its answer
    /// (true if it freed something). Retention never runs on a camera thread.
    func askRetentionForSpace() -> Bool {
        let ticket = retentionWorker.locked {
            urgentAsked += 1
            return urgentAsked
        }
        retentionWorker.wait(seconds: 120, until: { urgentServed >= ticket })
        return retentionWorker.locked { urgentServed >= ticket && urgentFreed }
    }

    /// An urgent pass: delete more than the settings ask (1 % of the file system, at least
    /// 16 MB) so recording can go on for a while.
    private func freeSpaceNow() -> Bool {
        let extra = max((retention.fileSystem()?.size ?? 0) / 100, 16 << 20)
        // The index needs a little room to record what it deletes.
        if reserve.release() {
            logger.warning("disk full: gave back the \(reserve.bytes >> 20) MB reserve so retention can run")
        }
        defer { reserve.ensure() }
        do { return try retention.enforce(dryRun: false, extraFree: extra).segments > 0 } catch {
            logger.error("retention failed while the disk is full: \(error)")
            return false
        }
    }

    /// The server's one detector (made and started on first use; its model loads on its thread).
    public func detector() -> DetectorWorker {
        detectorLock.withLock { d in
            if let d { return d }
            let options = options.detection
            let (logger, index) = (logger, index)
            let w = DetectorWorker {
                // What the detector came to is saved for `nvr camera list` (another process).
                do {
                    let m = try options.load()
                    logger.info(
                        "detection: \(m.source) (\(m.layout.name), \(m.inputWidth)x\(m.inputHeight), \(m.labels.count) labels) on ONNX Runtime \(m.runtimeVersion) (\(m.runtimePath))"
                    )
                    try? index.setSetting(Self.detectionStatusKey, "ready")
                    return m
                } catch {
                    logger.error("detection off: \(error)")
                    try? index.setSetting(Self.detectionStatusKey, "failed: \(error)")
                    throw error
                }
            }
            w.start()
            d = w
            return w
        }
    }

    /// The index setting where the server saves what its detector came to: "ready", or
    /// "failed: why".
    public static let detectionStatusKey = "detect.status"

    /// The detector if a camera has started it (for /metrics).
    public var runningDetector: DetectorWorker? { detectorLock.withLock { $0 } }

    /// Starts a camera's session, unless the recorder is stopping.
    private func startSession(_ camera: CameraRecord) {
        var recording = RecordingSettings()
        do { recording = try RecordingSettings.load(cameraID: camera.id!, index: index) } catch {
            logger.error("camera \(camera.name): bad recording settings, recording continuously: \(error)")
        }
        let session = CameraSession(
            camera: camera, plugins: plugins, writer: writer, storage: storage,
            settings: Segmenter.Settings(segmentSeconds: options.segmentSeconds), recording: recording, logger: logger,
            freeSpace: { [weak self] in self?.askRetentionForSpace() ?? false }, counters: counters(for: camera.name),
            detector: { [weak self] in self?.detector() })
        let added = lock.withLock { () -> Bool in
            // mayRecord again under the lock: a lease lost meanwhile stops what is here by now.
            guard !stopped, mayRecord(camera), sessions[camera.name] == nil else { return false }
            sessions[camera.name] = session
            return true
        }
        if added { session.start() }
    }

    public func session(named name: String) -> CameraSession? { lock.withLock { sessions[name] } }

    /// A camera's running totals for /metrics, the same object across its sessions.
    public func counters(for name: String) -> CameraCounters {
        counterSets.withLock { sets in
            if let c = sets[name] { return c }
            let c = CameraCounters()
            sets[name] = c
            return c
        }
    }
    private let counterSets = Mutex<[String: CameraCounters]>([:])

    public var allSessions: [CameraSession] { lock.withLock { Array(sessions.values) } }

    /// Stops every camera; each completes its open segment first. No camera starts once it
    /// has begun: the watcher is joined first (a change it is applying finishes, and its
    /// sessions are stopped with the rest), and `startSession` refuses after `stopped`.
    public func stop() {
        lock.withLock { stopped = true }
        watcher.stop()
        upkeep?.stop()
        upkeep = nil
        let all = lock.withLock { () -> [CameraSession] in
            let s = Array(sessions.values)
            sessions.removeAll()
            return s
        }
        DispatchQueue.concurrentPerform(iterations: all.count) { all[$0].stop() }
        detectorLock.withLock { $0 }?.stop()
        writer.close()  // commits what is left (retention still answers a full disk meanwhile)
        retentionWorker.stop()  // joins: a pass in progress finishes first
        serveLock = nil
    }
}
