import Foundation
import Logging
import NVRIndex
import NVRMedia
import Synchronization
import NVRPlayback

/// Runs the NVR's recording side: recovers the index, then records every enabled camera.
public final class Recorder: @unchecked Sendable {
    // @unchecked Sendable: `sessions` is guarded by `lock`; `stopping` and the urgent-pass
    // counters by `retentionWake`;
    // `retentionInterval` is set before start(); everything else is immutable.
    public let config: NVRConfig
    public let storage: StorageLayout
    public let index: IndexDatabase
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
    private let retentionWake = NSCondition()
    private var retentionThread: Thread?
    private var stopping = false
    private var serveLock: ServeLock?
    private var upkeep: CameraUpkeep?
    /// Room kept back for the index to record deletions on a full disk.
    private let reserve: SpaceReserve

    public init(config: NVRConfig, logger: Logger) throws {
        self.config = config
        self.logger = logger
        storage = StorageLayout(root: config.storageRoot)
        try storage.prepare()
        index = try IndexDatabase(path: storage.indexPath)
        writer = IndexWriter(index: index, logger: logger)
        plugins = PluginHost(directory: config.resolvedPluginsDir)
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

    /// Recovers, adds the demo camera to an empty index, and starts every enabled camera.
    public func start(addDemoIfEmpty: Bool = true) throws {
        try acquireLock()
        let report = try Recovery.run(index: index, storage: storage, logger: logger)
        let closed = try index.closeOpenEvents()
        if closed > 0 { logger.notice("recovery: closed \(closed) events left open by the last run") }
        if report.recovered + report.dropped + report.deletionsFinished + report.unindexedFiles > 0 {
            logger.notice("recovery: \(report.recovered) segments finished, \(report.dropped) dropped, \(report.deletionsFinished) deletions completed, \(report.unindexedFiles) files without rows removed")
        }
        if addDemoIfEmpty, try index.cameras().isEmpty {
            try index.addCamera(CameraRecord(name: "demo", plugin: "demo", config: "{}", created90k: Time90k.now()))
            logger.notice("no cameras yet: added the synthetic 'demo' camera (remove it with: nvr camera remove demo)")
        }
        logger.info("storage \(storage.root), plugins from \(plugins.directory), segments of \(config.segmentSeconds) s")
        // Make room before the first write, then keep making it.
        do { try retention.enforce(dryRun: false) } catch { logger.error("retention failed: \(error)") }
        reserve.ensure()
        generation = (try? index.camerasGeneration()) ?? 0
        for camera in try index.cameras() where camera.enabled {
            startSession(camera)
        }
        let u = CameraUpkeep(config: config, writer: writer, storage: storage, logger: logger) { [weak self] in self?.allSessions ?? [] }
        upkeep = u
        u.start()
        let t = Thread { [self] in retentionLoop() }
        t.name = "retention"
        retentionThread = t
        t.start()
        let w = Thread { [self] in watchLoop() }
        w.name = "camera changes"
        w.start()
    }

    /// Polls the index's cameras generation (one small read a second): a camera added,
    /// changed, enabled, disabled, renamed or removed — from the API or from `nvr` in another
    /// process — is started, restarted or stopped here, while the others keep recording.
    private func watchLoop() {
        while true {
            retentionWake.lock()
            let until = Date(timeIntervalSinceNow: changePollSeconds)
            while !stopping && retentionWake.wait(until: until) {}
            let stop = stopping
            retentionWake.unlock()
            if stop { return }
            guard let g = try? index.camerasGeneration(), g != generation else { continue }
            generation = g
            do { try reconcile() } catch { logger.error("cannot apply camera changes: \(error)") }
        }
    }

    /// Makes the running sessions match the enabled cameras of the index.
    public func reconcile() throws {
        let wanted = Dictionary(uniqueKeysWithValues: try index.cameras().filter(\.enabled).compactMap { c in c.id.map { ($0, c) } })
        let outdated = lock.withLock { () -> [CameraSession] in
            let gone = sessions.values.filter { s in s.camera.id.flatMap { wanted[$0] } != s.camera }
            for s in gone { sessions[s.camera.name] = nil }
            return gone
        }
        // Stopping completes each open segment; the others record on meanwhile.
        DispatchQueue.concurrentPerform(iterations: outdated.count) { i in
            let s = outdated[i]
            let why = wanted[s.camera.id ?? -1] == nil ? "removed or disabled" : "its settings changed"
            logger.info("camera \(s.camera.name): \(why); stopping")
            s.stop()
        }
        let running = lock.withLock { Set(sessions.values.compactMap(\.camera.id)) }
        for (id, cam) in wanted.sorted(by: { $0.value.name < $1.value.name }) where !running.contains(id) {
            logger.info("camera \(cam.name): starting")
            startSession(cam)
        }
    }

    /// Urgent passes asked for (a write failed for lack of space) and answered; what the
    /// last one freed. Guarded by `retentionWake`.
    private var urgentAsked = 0
    private var urgentServed = 0
    private var urgentFreed = false

    /// Retention runs here and only here: periodic passes, and urgent ones for a full disk.
    private func retentionLoop() {
        while true {
            retentionWake.lock()
            let until = Date(timeIntervalSinceNow: retentionInterval)
            while !stopping && urgentServed == urgentAsked && retentionWake.wait(until: until) {}
            let stop = stopping
            let urgent = urgentAsked
            let isUrgent = urgentServed != urgentAsked
            retentionWake.unlock()
            if stop { return }
            if isUrgent {
                let freed = freeSpaceNow()
                retentionWake.lock(); urgentServed = urgent; urgentFreed = freed; retentionWake.broadcast(); retentionWake.unlock()
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
        retentionWake.lock()
        defer { retentionWake.unlock() }
        urgentAsked += 1
        let ticket = urgentAsked
        retentionWake.broadcast()
        let deadline = Date(timeIntervalSinceNow: 120)
        while !stopping && urgentServed < ticket && retentionWake.wait(until: deadline) {}
        return urgentServed >= ticket && urgentFreed
    }

    /// An urgent pass: delete more than the settings ask (1 % of the file system, at least
    /// 16 MB) so recording can go on for a while.
    private func freeSpaceNow() -> Bool {
        let extra = max((retention.fileSystem()?.size ?? 0) / 100, 16 << 20)
        // The index needs a little room to record what it deletes.
        if reserve.release() { logger.warning("disk full: gave back the \(reserve.bytes >> 20) MB reserve so retention can run") }
        defer { reserve.ensure() }
        do { return try retention.enforce(dryRun: false, extraFree: extra).segments > 0 } catch {
            logger.error("retention failed while the disk is full: \(error)")
            return false
        }
    }

    private func startSession(_ camera: CameraRecord) {
        var recording = RecordingSettings()
        do { recording = try RecordingSettings.load(cameraID: camera.id!, index: index) } catch {
            logger.error("camera \(camera.name): bad recording settings, recording continuously: \(error)")
        }
        let session = CameraSession(camera: camera, plugins: plugins, writer: writer, storage: storage,
                                    settings: Segmenter.Settings(segmentSeconds: config.segmentSeconds), recording: recording, logger: logger,
                                    freeSpace: { [weak self] in self?.askRetentionForSpace() ?? false }, counters: counters(for: camera.name))
        lock.withLock { sessions[camera.name] = session }
        session.start()
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

    /// Stops every camera; each completes its open segment first.
    public func stop() {
        upkeep?.stop()
        upkeep = nil
        let all = lock.withLock { () -> [CameraSession] in
            let s = Array(sessions.values); sessions.removeAll(); return s
        }
        DispatchQueue.concurrentPerform(iterations: all.count) { all[$0].stop() }
        writer.close() // commits what is left (retention still answers a full disk meanwhile)
        retentionWake.lock(); stopping = true; retentionWake.broadcast(); retentionWake.unlock()
        serveLock = nil
    }
}
