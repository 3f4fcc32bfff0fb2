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
    public struct Counters: Sendable, Equatable, Codable {
        public var published = 0
        public var dropped = 0
    }

    public let options: Options
    private let index: any IndexStore
    private let recorder: Recorder
    private let snapshots: Snapshots
    private let audit: AuditLog
    private let logger: Logger
    private let worker = Worker(name: "mqtt bridge")
    private var connection: MQTTConnection!
    private let discovery: HomeAssistantDiscovery
    private let commands = Mutex<[(String, [UInt8])]>([])
    private let reannounce = Atomic<Bool>(true)
    private let counters = Mutex(Counters())

    // The worker thread's.
    private var queue: [(topic: String, payload: [UInt8])] = []
    private var retained: [String: [UInt8]] = [:]
    private var announced: [String: Set<String>] = [:]
    private var lastEventID: Int64 = 0
    private var open: [Int64: MQTTEventMessage.Event] = [:]
    private var lastStats = 0.0
    private var started = Date()
    private var savedStatus = ""
    private var badPayloadTopics: Set<String> = []

    /// The settings key the bridge keeps its connection state and counters under, for
    /// /api/health, /metrics and `nvr camera list` (other processes).
    public static let statusKey = "mqtt.status"
    static let announcedKey = "mqtt.announced"

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
                }
                conn.publish("\(prefix)/available", "online", retain: true)
                self?.reannounce.store(true, ordering: .relaxed)
                self?.worker.locked {}
            },
            onMessage: { [weak self] topic, payload in
                self?.commands.withLock { $0.append((topic, payload)) }
                self?.worker.locked {}
            },
            onGoodbye: { conn in conn.publish("\(prefix)/available", "offline", retain: true) })
    }

    public var status: MQTTConnection.Status { connection.status }

    public func start() throws {
        let recent = try index.events(
            cameraID: nil, start90k: Time90k.now() - 86_400 * 90_000, end90k: Time90k.now() + 3600 * 90_000, limit: 1000
        )
        lastEventID = recent.compactMap(\.id).max() ?? 0
        let names = Dictionary(
            uniqueKeysWithValues: try index.cameras(includeRemoved: true).compactMap { c in c.id.map { ($0, c.name) } })
        for e in recent where e.end90k == nil {
            if let id = e.id, let name = names[e.cameraID] {
                open[id] = MQTTEventMessage.Event(e, camera: name, hasClip: false, hasSnapshot: false)
            }
        }
        if let text = try index.setting(Self.announcedKey),
            let saved = try? JSONDecoder().decode([String: [String]].self, from: Data(text.utf8))
        {
            announced = saved.mapValues(Set.init)
        }
        try connection.start()
        worker.start { [self] in
            while worker.wait(seconds: 1, until: { !commands.withLock { $0.isEmpty } }) {
                tick()
            }
        }
    }

    /// Publishes `offline` and disconnects.
    public func stop() {
        worker.stop()
        connection.stop()
        saveStatus()
    }

    // MARK: the worker thread

    private func tick() {
        let connected = connection.status.state == .connected
        if connected, reannounce.exchange(false, ordering: .relaxed) {
            retained = [:]  // every state again: the broker may have lost them
            publish(discovery.server().topic, discovery.server().payload, retain: true)
            flushQueue()
        }
        handleCommands()
        do {
            try cameras()
            try events()
            stats()
        } catch {
            logger.warning("mqtt: cannot read the index: \(error)")
        }
        saveStatus()
    }

    private func cameras() throws {
        let cams = try index.cameras()
        for cam in cams {
            guard let id = cam.id else { continue }
            let labels = announced[cam.name] ?? []
            if !connection.publishable { continue }
            if retained["discovery/\(cam.name)"] == nil || !announcedSame(cam.name, labels) {
                announce(cam, labels: labels)
            }
            let status = recorder.session(named: cam.name)?.status
            let state = cam.enabled ? (status?.state.rawValue ?? "stopped") : "disabled"
            var s: [String: String] = ["state": state]
            if let r = status?.reason { s["reason"] = r }
            if let t = status?.since90k { s["since"] = Time90k.rfc3339(t) }
            publishRetained("\(options.prefix)/\(cam.name)/state", json(s))
            let settings = try index.recordingSettings(cameraID: id)
            publishRetained("\(options.prefix)/\(cam.name)/recording/state", settings.mode == "off" ? "OFF" : "ON")
            let motionOn = (try? RecordingSettings(settings).motionEnabled) ?? false
            publishRetained("\(options.prefix)/\(cam.name)/motion/state", motionOn ? "ON" : "OFF")
            let openHere = open.values.filter { $0.camera == cam.name }
            publishRetained(
                "\(options.prefix)/\(cam.name)/motion", openHere.contains { $0.label == "motion" } ? "ON" : "OFF")
            for label in labels where label != "motion" {
                publishRetained(
                    "\(options.prefix)/\(cam.name)/\(label)", String(openHere.filter { $0.label == label }.count))
            }
        }
        // Removed or renamed: their entities go (an empty retained config each).
        let names = Set(cams.map(\.name))
        for (name, labels) in announced where !names.contains(name) && connection.publishable {
            for topic in discovery.topics(camera: name, labels: Array(labels)) { publish(topic, "", retain: true) }
            for topic in ["state", "recording/state", "motion/state", "motion"] {
                publish("\(options.prefix)/\(name)/\(topic)", "", retain: true)
            }
            announced[name] = nil
            retained["discovery/\(name)"] = nil
            saveAnnounced()
        }
    }

    private func announcedSame(_ name: String, _ labels: Set<String>) -> Bool {
        retained["discovery/\(name)"] == Array(labels.sorted().joined(separator: ",").utf8)
    }

    private func announce(_ cam: CameraRecord, labels: Set<String>) {
        for topic in discovery.staleTopics(camera: cam.name) { publish(topic, "", retain: true) }
        // The model as the camera's plugin reports it (ONVIF's device information, a GoPro's).
        let statusJSON = try? recorder.session(named: cam.name)?.pluginInstance?.status()
        let model = statusJSON.flatMap { $0 }.flatMap { try? JSONValue(text: $0) }?[text: "model"]
        for e in discovery.camera(cam.name, plugin: cam.plugin, model: model, labels: labels.sorted()) {
            publish(e.topic, e.payload, retain: true)
        }
        retained["discovery/\(cam.name)"] = Array(labels.sorted().joined(separator: ",").utf8)
        if announced[cam.name] != labels {
            announced[cam.name] = labels
            saveAnnounced()
        }
    }

    private func events() throws {
        let now = Time90k.now()
        let recent = try index.events(
            cameraID: nil, start90k: now - 86_400 * 90_000, end90k: now + 3600 * 90_000, limit: 1000)
        var names: [Int64: String] = [:]
        for e in recent.sorted(by: { ($0.id ?? 0) < ($1.id ?? 0) }) {
            guard let id = e.id else { continue }
            let isNew = id > lastEventID
            let ended = open[id] != nil && e.end90k != nil
            guard isNew || ended else { continue }
            if names.isEmpty {
                names = Dictionary(
                    uniqueKeysWithValues: try index.cameras(includeRemoved: true).compactMap { c in
                        c.id.map { ($0, c.name) }
                    })
            }
            guard let camera = names[e.cameraID] else { continue }
            if !(announced[camera] ?? []).contains(e.type) {
                announced[camera, default: []].insert(e.type)
                retained["discovery/\(camera)"] = nil  // announce the label's entities
                saveAnnounced()
            }
            let snapshot = publishSnapshot(e, camera: camera)
            let hasClip =
                !((try? index.segments(
                    cameraID: e.cameraID, start90k: e.start90k - e.preRoll90k, end90k: e.end90k ?? now)) ?? []).isEmpty
            let after = MQTTEventMessage.Event(e, camera: camera, hasClip: hasClip, hasSnapshot: snapshot)
            if isNew {
                lastEventID = id
                enqueue("\(options.prefix)/events", MQTTEventMessage(type: "new", before: after, after: after).json)
                if e.end90k == nil {
                    open[id] = after
                } else {
                    enqueue("\(options.prefix)/events", MQTTEventMessage(type: "end", before: after, after: after).json)
                }
            } else if let before = open.removeValue(forKey: id) {
                enqueue("\(options.prefix)/events", MQTTEventMessage(type: "end", before: before, after: after).json)
            }
        }
        // Open events the index no longer lists (deleted): forget them.
        let listed = Set(recent.compactMap(\.id))
        for id in open.keys where !listed.contains(id) { open[id] = nil }
    }

    /// The event's best frame on <prefix>/<camera>/<label>/snapshot (retained: Home Assistant's
    /// camera entity shows the newest).
    private func publishSnapshot(_ e: EventRecord, camera: String) -> Bool {
        guard connection.publishable,
            let shot = try? snapshots.frame(cameraID: e.cameraID, at: e.snapshot90k ?? e.start90k, width: nil)
        else { return false }
        return publish("\(options.prefix)/\(camera)/\(e.type)/snapshot", shot.jpeg, retain: true)
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

    // MARK: commands

    private func handleCommands() {
        let pending = commands.withLock { c -> [(String, [UInt8])] in
            defer { c = [] }
            return c
        }
        for (topic, payload) in pending { command(topic, payload) }
    }

    /// <prefix>/<camera>/recording/set, motion/set, detect/set with ON or OFF.
    private func command(_ topic: String, _ payload: [UInt8]) {
        let parts = topic.dropFirst(options.prefix.count + 1).split(separator: "/", omittingEmptySubsequences: false)
        let value = String(decoding: payload, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            .uppercased()
        guard parts.count == 3, parts[2] == "set", value == "ON" || value == "OFF" else {
            return badPayload(topic, "expected ON or OFF on <camera>/recording/set, motion/set or detect/set")
        }
        let name = String(parts[0])
        let what = String(parts[1])
        do {
            guard let cam = try index.camera(named: name), let id = cam.id else {
                return badPayload(topic, "no camera named \(name)")
            }
            var s = try index.recordingSettings(cameraID: id)
            let previousKey = "mqtt.previous.\(what).\(id)"
            switch what {
            case "recording":
                if value == "OFF", s.mode != "off" {
                    try index.setSetting(previousKey, s.mode)
                    s.mode = "off"
                } else if value == "ON", s.mode == "off" {
                    s.mode = try index.setting(previousKey) ?? "continuous"
                }
            case "motion":
                if value == "OFF", s.motion != "off" {
                    try index.setSetting(previousKey, s.motion)
                    s.motion = "off"
                } else if value == "ON", s.motion == "off" {
                    s.motion = try index.setting(previousKey) ?? "on"
                }
            case "detect":
                return badPayload(topic, "this NVR has no object detection yet: detect/set does nothing")
            default:
                return badPayload(topic, "unknown command \(what) (recording/set, motion/set)")
            }
            try index.setRecordingSettings(s)
            audit.record("mqtt", "camera.\(what)", target: name, detail: ["set": value, "via": "mqtt"])
            logger.notice("mqtt: \(name) \(what) \(value)")
            // Acknowledged on the state topic at once (the recorder applies it within two seconds).
            publishRetained("\(options.prefix)/\(name)/\(what)/state", value)
        } catch {
            logger.warning("mqtt: \(topic): \(error)")
        }
    }

    /// Logged once per topic, then ignored: MQTT has no sender to answer.
    private func badPayload(_ topic: String, _ why: String) {
        guard badPayloadTopics.insert(String(topic.prefix(200))).inserted, badPayloadTopics.count < 1000 else { return }
        logger.warning("mqtt: ignored \(topic.prefix(200)): \(why)")
    }

    // MARK: publishing

    private func publishRetained(_ topic: String, _ text: String) {
        let bytes = Array(text.utf8)
        guard retained[topic] != bytes else { return }
        if publish(topic, bytes, retain: true) { retained[topic] = bytes }
    }

    @discardableResult
    private func publish(_ topic: String, _ text: String, retain: Bool = false) -> Bool {
        publish(topic, Array(text.utf8), retain: retain)
    }

    @discardableResult
    private func publish(_ topic: String, _ bytes: [UInt8], retain: Bool = false) -> Bool {
        let ok = connection.publish(topic, bytes, retain: retain)
        if ok { counters.withLock { $0.published += 1 } }
        return ok
    }

    /// An event message now, or, while the broker is away, in the bounded queue.
    private func enqueue(_ topic: String, _ text: String) {
        if queue.isEmpty, publish(topic, text) { return }
        queue.append((topic, Array(text.utf8)))
        if queue.count > options.queueLimit {
            let over = queue.count - options.queueLimit
            queue.removeFirst(over)
            counters.withLock { $0.dropped += over }
        }
        flushQueue()
    }

    private func flushQueue() {
        while let first = queue.first, publish(first.topic, first.payload) { queue.removeFirst() }
    }

    private func saveAnnounced() {
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
