import Foundation
import Logging
import NVRIndex
import NVRPlayback
import NVRPluginHost
import NVRStorage
import NVRTime
import NVRWorker

/// The recorder's slow, camera-side chores, on one thread so they never touch a recording
/// thread: saves each plugin's status (battery, card) to the index when it changes, and lists
/// cards and backfills gaps from them — after every connect, a minute after it (the card file
/// covering the end of the gap is then closed), and every `cardRefreshSeconds`.
final class CameraUpkeep: @unchecked Sendable {
    // @unchecked Sendable: the dictionaries are touched only by the upkeep thread.
    private let config: Recorder.Options
    private let index: any IndexStore
    private let writer: IndexWriter
    private let storage: StorageLayout
    /// Shared with admins' syncs through the API: a camera whose card is being synced there is
    /// skipped here until it is done.
    private let cardSyncs: OneAtATime
    private let logger: Logger
    private let sessions: () -> [CameraSession]
    private let worker = Worker(name: "camera upkeep")
    /// Per camera: the status last saved, the connection count last synced, when the card was last listed.
    private var savedStatus: [Int64: String] = [:]
    private var syncedConnections: [Int64: Int] = [:]
    private var lastCardSync: [Int64: Date] = [:]
    /// A second sync a minute after a reconnect: the card file covering the end of the gap is
    /// usually still being written (not listed) at the first one.
    private var followUp: [Int64: Date] = [:]
    /// Seconds between a reconnect's sync and its follow-up.
    var followUpSeconds: Double = 60
    /// The last card sync error per camera: logged as a warning once, then quietly.
    private var cardErrors: [Int64: String] = [:]
    /// How often statuses are looked at.
    var interval: Double = 2

    init(
        options config: Recorder.Options, writer: IndexWriter, storage: StorageLayout,
        cardSyncs: OneAtATime = OneAtATime(), logger: Logger, sessions: @escaping () -> [CameraSession]
    ) {
        self.cardSyncs = cardSyncs
        self.config = config
        self.index = writer.index
        self.writer = writer
        self.storage = storage
        self.logger = logger
        self.sessions = sessions
    }

    func start() { worker.start { [self] in loop() } }

    /// Stops after the chore in progress (a backfill stops at its next block).
    func stop() { worker.stop() }

    private var isStopping: Bool { worker.isStopping }

    private func loop() {
        while !isStopping {
            for session in sessions() {
                if isStopping { break }
                guard let id = session.camera.id, let instance = session.pluginInstance else { continue }
                saveStatus(cameraID: id, instance: instance)
                if instance.offersCardList { syncCardIfDue(session, cameraID: id, instance: instance) }
            }
            worker.wait(seconds: interval)
        }
    }

    private func saveStatus(cameraID: Int64, instance: PluginInstance) {
        guard let json = instance.status(), json != savedStatus[cameraID] else { return }
        do {
            try index.setPluginStatus(cameraID: cameraID, json: json, at: Time90k.now())
            savedStatus[cameraID] = json
        } catch {
            logger.warning("saving the status of camera \(cameraID) failed: \(error)")
        }
    }

    private func syncCardIfDue(_ session: CameraSession, cameraID: Int64, instance: PluginInstance) {
        let connections = session.connections
        let due =
            lastCardSync[cameraID].map { Date().timeIntervalSince($0) >= Double(config.cardRefreshSeconds) } ?? true
        let reconnected = connections != syncedConnections[cameraID]
        let followingUp = followUp[cameraID].map { Date() >= $0 } ?? false
        guard connections > 0, due || reconnected || followingUp else { return }
        // An admin's sync of this camera is running: this one is tried again at the next look.
        guard cardSyncs.claim("card-\(cameraID)") else { return }
        defer { cardSyncs.release("card-\(cameraID)") }
        followUp[cameraID] = reconnected ? Date(timeIntervalSinceNow: followUpSeconds) : nil
        syncedConnections[cameraID] = connections
        lastCardSync[cameraID] = Date()
        let now = Time90k.now()
        let window = (now - Int64(config.cardBackfillHours) * 3600 * 90_000)..<now
        let sync = CardSync(
            camera: session.camera, writer: writer, storage: storage, segmentSeconds: config.segmentSeconds,
            logger: logger)
        do {
            let r = try sync.run(
                instance, window: window, backfill: config.cardBackfill,
                isCancelled: { [weak self] in self?.isStopping ?? true })
            session.counters.cardBackfillBytes.add(r.bytesFetched, ordering: .relaxed)
            logger.log(
                level: r.segments > 0 ? .info : .debug,
                "camera \(session.camera.name): card has \(r.files) videos; \(r.gaps) gaps, \(r.segments) segments backfilled"
            )
            cardErrors[cameraID] = nil
        } catch {
            let message = "\(error)"
            logger.log(
                level: cardErrors[cameraID] == message ? .debug : .warning,
                "camera \(session.camera.name): card sync failed: \(message)")
            cardErrors[cameraID] = message
        }
    }
}
