import Foundation
import Logging
import NVRAccess
import NVRIndex
import NVRPlayback
import NVRPluginHost
import NVRRecorder
import NVRStorage
import NVRTime
import NVRWorker
import Synchronization

/// What the NVR tells the smart home over MQTT, and what it takes from it (design/mqtt.md):
/// availability, events in Frigate's shape, each camera's motion, state, recording and label
/// counts, Home Assistant discovery, stats, and — with mqtt.commands — recording and motion
/// switches. It runs on a thread of its own that looks at the index and the recorder once a
/// second: no camera thread ever calls it or waits for it, and a broker that is away costs
/// the recording nothing (events wait in a bounded queue; the oldest are dropped and counted).
public final class MQTTBridge: @unchecked Sendable {
    // @unchecked Sendable: everything but `commands`, `reannounce` and `counters` (behind
    // their locks) belongs to the bridge's worker thread.
    public struct Options: Sendable, Equatable {
        public var connection: MQTTConnection.Options
        /// Topics start with it (mqtt.topic_prefix).
        public var prefix = "nvr"
        /// Listen to <prefix>/<camera>/recording/set and motion/set (mqtt.commands).
        public var commands = false
        public var statsSeconds = 60.0
        /// Event messages kept while the broker is away.
        public var queueLimit = 1000

        public init(connection: MQTTConnection.Options) { self.connection = connection }
    }

    /// Published and dropped messages, for /metrics (through the index: `MQTTBridge.statusKey`).
    struct Counters: Sendable, Equatable {
        var published = 0
        var dropped = 0
    }

    struct PendingSnapshot {
        var cameraID: Int64
        var camera: String
        var label: String
        var at: Int64
        var until: Date
    }

    /// An event published as "new" and not yet ended.
    struct OpenEvent {
        var cameraID: Int64
        var message: MQTTEventMessage.Event
    }

    public let options: Options
    let index: any IndexStore
    let recorder: Recorder
    let snapshots: Snapshots
    let audit: AuditLog
    let logger: Logger
    private let worker = Worker(name: "mqtt bridge")
    private var connection: MQTTConnection!
    let discovery: HomeAssistantDiscovery
    let commands = Mutex<[(String, [UInt8])]>([])
    private let reannounce = Atomic<Bool>(true)
    private let counters = Mutex(Counters())

    // The worker thread's.
    private var queue: [(topic: String, payload: [UInt8])] = []
    /// What each retained topic was last set to (nothing is sent again unchanged).
    var retained: [String: [UInt8]] = [:]
    /// The labels announced under each camera name (kept in the index: removal after a restart).
    var announced: [String: Set<String>] = [:]
    /// The labels each camera's events have had, by camera id (a rename keeps them).
    var labels: [Int64: Set<String>] = [:]
    /// Events published, id → start (SQLite reuses the id of a deleted newest event).
    var published: [Int64: Int64] = [:]
    var open: [Int64: OpenEvent] = [:]
    /// Event snapshots still to publish, by event id.
    var pendingSnapshots: [Int64: PendingSnapshot] = [:]
    private var lastStats = 0.0
    private let started = Date()
    private var savedStatus = ""
    var badPayloadTopics: Set<String> = []

    /// The settings key the bridge keeps its connection state and counters under, for
    /// /api/health, /metrics and `nvr camera list` (other processes).
    public static let statusKey = "mqtt.status"
    static let announcedKey = "mqtt.announced"
    /// Labels whose topics would collide with the NVR's own under <prefix>/<camera>/: their
    /// events are published, but no count or entities.
    static let reservedLabels: Set<String> = ["motion", "state", "recording", "snapshot", "detect", "set", "stats"]

    public init(
        options: Options, index: any IndexStore, recorder: Recorder, snapshots: Snapshots, audit: AuditLog,
        logger: Logger
    ) {
        self.options = options
        self.index = index
        self.recorder = recorder
        self.snapshots = snapshots
        self.audit = audit
        self.logger = logger
        discovery = HomeAssistantDiscovery(
            prefix: options.prefix, clientID: options.connection.clientID, version: NVRVersion.current,
            commands: options.commands)
        var c = options.connection
        c.will = ("\(options.prefix)/available", "offline")
        let prefix = options.prefix
        let wantsCommands = options.commands
        connection = MQTTConnection(
            options: c, logger: logger,
            onConnect: { [weak self] conn in
                if wantsCommands {
                    conn.subscribe("\(prefix)/+/recording/set")
                    conn.subscribe("\(prefix)/+/motion/set")
                    conn.subscribe("\(prefix)/+/detect/set")
                    conn.subscribe("\(prefix)/+/ptz")
                }
                conn.publish("\(prefix)/available", "online", retain: true)
                self?.reannounce.store(true, ordering: .relaxed)
                self?.worker.locked {}
            },
            onMessage: { [weak self] topic, payload in
                // A command is a word or a short JSON request (PTZ); a flood waits at most 100 deep
                // (MQTT names no sender to slow down).
                self?.commands.withLock { c in if c.count < 100 { c.append((topic, Array(payload.prefix(512)))) } }
                self?.worker.locked {}
            },
            onGoodbye: { conn in conn.publish("\(prefix)/available", "offline", retain: true) })
    }

    public var status: MQTTConnection.Status { connection.status }

    public func start() throws {
        let cams = try index.cameras(includeRemoved: true)
        let now = Time90k.now()
        for e in try index.events(cameraID: nil, start90k: now - Self.window, end90k: now + 3600 * 90_000, limit: 1000)
        {
            guard let id = e.id else { continue }
            published[id] = e.start90k
            if e.end90k == nil, let cam = cams.first(where: { $0.id == e.cameraID }) {
                open[id] = OpenEvent(
                    cameraID: e.cameraID,
                    message: MQTTEventMessage.Event(e, camera: cam.name, hasClip: false, hasSnapshot: false))
            }
        }
        if let text = try index.setting(Self.announcedKey),
            let saved = try? JSONDecoder().decode([String: [String]].self, from: Data(text.utf8))
        {
            announced = saved.mapValues(Set.init)
            for cam in cams { if let id = cam.id, let l = announced[cam.name] { labels[id] = l } }
        }
        try connection.start()
        worker.start { [self] in
            while worker.wait(seconds: 1, until: { !commands.withLock { $0.isEmpty } }) {
                tick()
            }
        }
    }

    /// One last look (after the recorder stopped: its closed events' "end", cameras stopped),
    /// then `offline`, and disconnects.
    public func stop() {
        worker.stop()
        tick()  // on this thread: the worker's has ended
        connection.stop()
        saveStatus()
    }

    /// How far back events are looked at.
    static let window: Int64 = 86_400 * 90_000

    // MARK: the worker thread

    private func tick() {
        if connection.publishable, reannounce.exchange(false, ordering: .relaxed) {
            retained = [:]  // every state again: the broker may have lost them
            let server = discovery.server()
            publish(server.topic, server.payload, retain: true)
        }
        handleCommands()
        do {
            try cameras()
            try events()
            publishSnapshots()
            stats()
        } catch {
            logger.warning("mqtt: cannot read the index: \(error)")
        }
        // After the configs and states: queued events come last on a reconnection.
        flushQueue()
        saveStatus()
    }

    private func cameras() throws {
        guard connection.publishable else { return }
        let cams = try index.cameras()
        let now = Time90k.now()
        for cam in cams {
            guard let id = cam.id else { continue }
            let camLabels = (labels[id] ?? []).subtracting(Self.reservedLabels)
            if retained["discovery/\(cam.name)"] != Array(camLabels.sorted().joined(separator: ",").utf8) {
                announce(cam, labels: camLabels)
            }
            let status = recorder.session(named: cam.name)?.status
            let state = cam.enabled ? (status?.state.rawValue ?? "stopped") : "disabled"
            var s: [String: String] = ["state": state]
            if let r = status?.reason { s["reason"] = r }
            if let t = status?.since90k { s["since"] = Time90k.rfc3339(t) }
            publishRetained("\(options.prefix)/\(cam.name)/state", json(s))
            let record = try index.recordingSettings(cameraID: id)
            let settings = try? RecordingSettings(record)
            // The mode in force now (a schedule's rule included).
            let recording = settings.map { $0.mode(at: now) != .off } ?? (record.mode != "off")
            publishRetained("\(options.prefix)/\(cam.name)/recording/state", recording ? "ON" : "OFF")
            publishRetained(
                "\(options.prefix)/\(cam.name)/motion/state", settings?.motionEnabled == true ? "ON" : "OFF")
            let openHere = open.values.filter { $0.cameraID == id }
            publishRetained(
                "\(options.prefix)/\(cam.name)/motion",
                openHere.contains { $0.message.label == "motion" } ? "ON" : "OFF")
            for label in camLabels {
                publishRetained(
                    "\(options.prefix)/\(cam.name)/\(label)",
                    String(openHere.filter { $0.message.label == label }.count))
            }
        }
        // Removed or renamed: their entities and retained topics go (an empty retained message each).
        let names = Set(cams.map(\.name))
        for (name, gone) in announced where !names.contains(name) {
            for topic in discovery.topics(camera: name, labels: gone.sorted()) { publish(topic, "", retain: true) }
            var topics = ["state", "recording/state", "motion/state", "motion", "snapshot"]
            for label in gone { topics += [label, "\(label)/snapshot"] }
            topics.append("motion/snapshot")
            for topic in topics { publish("\(options.prefix)/\(name)/\(topic)", "", retain: true) }
            announced[name] = nil
            retained["discovery/\(name)"] = nil
            saveAnnounced()
        }
    }

    private func announce(_ cam: CameraRecord, labels camLabels: Set<String>) {
        for topic in discovery.staleTopics(camera: cam.name) { publish(topic, "", retain: true) }
        // The model as the camera's plugin reports it (ONVIF's device information, a GoPro's).
        let statusJSON = try? recorder.session(named: cam.name)?.pluginInstance?.status()
        let model = statusJSON.flatMap { $0 }.flatMap { try? JSONValue(text: $0) }?[text: "model"]
        for e in discovery.camera(cam.name, plugin: cam.plugin, model: model, labels: camLabels.sorted()) {
            publish(e.topic, e.payload, retain: true)
        }
        retained["discovery/\(cam.name)"] = Array(camLabels.sorted().joined(separator: ",").utf8)
        if announced[cam.name] != camLabels {
            announced[cam.name] = camLabels
            saveAnnounced()
        }
    }

    private func stats() {
        let now = Date().timeIntervalSince1970
        guard now - lastStats >= options.statsSeconds, connection.publishable else { return }
        lastStats = now
        var cams: [String: Any] = [:]
        for cam in (try? index.cameras()) ?? [] {
            let s = recorder.session(named: cam.name)?.status
            var c: [String: Any] = ["state": cam.enabled ? (s?.state.rawValue ?? "stopped") : "disabled"]
            if let fps = s?.fps { c["fps"] = fps }
            if let b = s?.bitRate { c["bitRate"] = b }
            cams[cam.name] = c
        }
        let counts = counters.withLock { $0 }
        let body: [String: Any] = [
            "cameras": cams,
            "service": ["version": NVRVersion.current, "uptime": Int(Date().timeIntervalSince(started))],
            "mqtt": ["published": counts.published, "dropped": counts.dropped],
        ]
        let data = (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])) ?? Data()
        publish("\(options.prefix)/stats", [UInt8](data))
    }

    // MARK: publishing

    func publishRetained(_ topic: String, _ text: String) {
        let bytes = Array(text.utf8)
        guard retained[topic] != bytes else { return }
        if publish(topic, bytes, retain: true) { retained[topic] = bytes }
    }

    @discardableResult
    func publish(_ topic: String, _ text: String, retain: Bool = false) -> Bool {
        publish(topic, Array(text.utf8), retain: retain)
    }

    @discardableResult
    func publish(_ topic: String, _ bytes: [UInt8], retain: Bool = false) -> Bool {
        let ok = connection.publish(topic, bytes, retain: retain)
        if ok { counters.withLock { $0.published += 1 } }
        return ok
    }

    var publishable: Bool { connection.publishable }

    /// An event message now, or, while the broker is away, in the bounded queue.
    func enqueue(_ topic: String, _ text: String) {
        if queue.isEmpty, publish(topic, text) { return }
        queue.append((topic, Array(text.utf8)))
        if queue.count > options.queueLimit {
            let over = queue.count - options.queueLimit
            queue.removeFirst(over)
            counters.withLock { $0.dropped += over }
        }
    }

    private func flushQueue() {
        while let first = queue.first, publish(first.topic, first.payload) { queue.removeFirst() }
    }

    func saveAnnounced() {
        let data = (try? JSONEncoder().encode(announced.mapValues { $0.sorted() })) ?? Data()
        try? index.setSetting(Self.announcedKey, String(decoding: data, as: UTF8.self))
    }

    /// The connection's state and the counters, in the index for other processes; written
    /// when they change.
    private func saveStatus() {
        let s = connection.status
        let c = counters.withLock { $0 }
        let saved = MQTTSavedStatus(
            state: s.state.rawValue, reason: s.reason, since90k: s.since90k,
            broker: "\(options.connection.host):\(options.connection.port)", published: c.published, dropped: c.dropped,
            queued: queue.count)
        guard let data = try? JSONEncoder().encode(saved) else { return }
        let text = String(decoding: data, as: UTF8.self)
        guard text != savedStatus else { return }
        savedStatus = text
        try? index.setSetting(Self.statusKey, text)
    }

    private func json(_ d: [String: String]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: d, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}

extension MQTTConnection {
    /// Connected: what is published now reaches the broker.
    var publishable: Bool { status.state == .connected }
}
