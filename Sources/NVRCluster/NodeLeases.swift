import Foundation
import Logging
import NVRIndex
import NVRIndexPostgres
import NVRRecorder
import NVRWorker
import Synchronization

/// Keeps this node's camera leases (design/scale-out.md): every `renewSeconds` a heartbeat
/// that renews what it holds, then takes free cameras up to its fair share and gives up what is
/// over it. A separate guard thread, which never waits for PostgreSQL, stops a camera once the
/// node can no longer be sure of its lease: `deadlineSeconds` after the start of the last
/// renewal that succeeded, which is before the lease can expire on the server (the server set
/// its expiry `leaseSeconds` after it received that renewal, and so after it was sent).
public final class NodeLeases: CameraOwnership, @unchecked Sendable {
    // @unchecked Sendable: `state` is behind its Mutex; the rest is immutable or set before start.
    public struct Timing: Sendable {
        /// How long a lease lasts on the server after each renewal.
        public var leaseSeconds: Double = 6
        /// Between heartbeats.
        public var renewSeconds: Double = 1.5
        /// A camera is stopped this long after the start of the last renewal that succeeded.
        public var deadlineSeconds: Double = 3.5
        /// After joining, the node waits this long before taking cameras, so nodes starting
        /// together see each other and share.
        public var joinSeconds: Double = 4
        public init() {}
    }

    public let name: String
    public let timing: Timing
    let index: PostgresIndex
    let logger: Logger
    weak var recorder: Recorder?

    struct Held {
        var token: Int64
        /// Monotonic seconds after which this node must no longer record it.
        var deadline: Double
        /// Being given up: its recording stops, its last writes still land.
        var releasing = false
    }
    struct State {
        var held: [Int64: Held] = [:]
        var joined: Double = 0
        var lastRenewal: Double?
    }
    private let state = Mutex(State())
    private let keeper = Worker(name: "leases")
    private let guardian = Worker(name: "lease guard")
    private let mounts = Worker(name: "node storage")

    public init(name: String, index: PostgresIndex, timing: Timing = Timing(), logger: Logger) {
        self.name = name
        self.index = index
        self.timing = timing
        self.logger = logger
    }

    public func mayRecord(_ cameraID: Int64) -> Bool {
        let now = Self.monotonic()
        return state.withLock { $0.held[cameraID].map { now < $0.deadline && !$0.releasing } ?? false }
    }

    /// The cameras held now, with their tokens.
    public var held: [Int64: Int64] { state.withLock { $0.held.mapValues(\.token) } }

    /// Registers the node (dropping any lease an earlier process of this name left) and makes
    /// `recorder` record only what this node holds: before the recorder starts, so it starts no
    /// camera on its own.
    public func attach(_ recorder: Recorder, advertiseURL: String?, storageID: String) throws {
        self.recorder = recorder
        try index.registerNode(
            name, advertiseURL: advertiseURL, storageRoot: recorder.storage.root, storageID: storageID)
        // Before recovery, which looks for files without rows among this node's own.
        let storage = recorder.storage
        let adopted = try index.adoptSegmentsFromBeforeNodes {
            FileManager.default.fileExists(atPath: storage.absolute($0))
        }
        if adopted > 0 {
            logger.notice(
                "node \(name): took \(adopted) segments recorded before nodes (their files are in \(storage.root))")
        }
        index.fence.set([:])
        NodeStorage.refresh(recorder.storage, me: name, nodes: (try? index.nodes()) ?? [])
        recorder.ownership = self
    }

    /// Starts keeping leases: after the recorder has started (its recovery done), so no camera
    /// starts while recovery looks at this node's unfinished rows.
    public func start() {
        state.withLock { $0.joined = Self.monotonic() }
        keeper.start { [self] in
            repeat { tick() } while keeper.wait(seconds: timing.renewSeconds)
        }
        guardian.start { [self] in
            while guardian.wait(seconds: 0.2) { enforceDeadlines() }
        }
        mounts.start { [self] in
            while mounts.wait(seconds: 5) {
                // Its own thread: a dead peer's hard NFS mount may block a read for good.
                if let recorder, let nodes = try? index.nodes() {
                    NodeStorage.refresh(recorder.storage, me: name, nodes: nodes)
                }
            }
        }
    }

    /// Stops taking and giving up cameras (shutdown begins): held leases are still guarded, and
    /// lapse or are given back by `stop`.
    public func stopBalancing() { keeper.stop() }

    /// Gives back the leases held (the recorder has stopped its cameras) and says this node is
    /// leaving, so the others take its cameras at once.
    public func stop() {
        keeper.stop()
        guardian.stop()
        mounts.stop()
        let held = state.withLock { s -> [Int64: Held] in
            defer { s.held = [:] }
            return s.held
        }
        index.fence.set([:])
        for (camera, h) in held {
            try? index.releaseLease(cameraID: camera, node: name, token: h.token)
        }
        try? index.leaveNode(name)
    }

    /// One heartbeat: renew, then balance.
    func tick() {
        let started = Self.monotonic()
        let renewed: [Int64: Int64]
        do {
            renewed = try index.heartbeat(
                name, holding: state.withLock { $0.held.mapValues(\.token) }, leaseSeconds: timing.leaseSeconds)
        } catch {
            logger.warning("node \(name): cannot renew its leases: \(error)")
            return
        }
        var lost: [Int64] = []
        state.withLock { s in
            s.lastRenewal = started
            for (camera, h) in s.held {
                if let token = renewed[camera], token == h.token {
                    s.held[camera]?.deadline = started + timing.deadlineSeconds
                } else {
                    s.held[camera] = nil
                    lost.append(camera)
                }
            }
        }
        if !lost.isEmpty {
            logger.warning("node \(name): lost the leases of cameras \(lost.sorted())")
            publish()
        }
        guard started - state.withLock({ $0.joined }) >= timing.joinSeconds else { return }
        do { try balance(renewedAt: started) } catch {
            logger.warning("node \(name): cannot balance cameras: \(error)")
        }
    }

    /// Takes free cameras up to this node's share and gives up what is over it.
    func balance(renewedAt started: Double) throws {
        let nodes = try index.nodes()
        let live = Set(nodes.filter { $0.heartbeatAge < timing.leaseSeconds }.map(\.name)).union([name])
        let cameras = try index.cameras().filter(\.enabled)
        let leases = Dictionary(uniqueKeysWithValues: try index.leases().map { ($0.cameraID, $0) })
        let plan = LeasePlan(node: name, liveNodes: live, cameras: cameras, leases: leases)
        var changed = false
        for camera in plan.release {
            guard let h = state.withLock({ $0.held[camera] }) else { continue }
            // Stop recording and let its last writes land, then give the lease up: never two
            // writers.
            state.withLock { $0.held[camera]?.releasing = true }
            publish()
            recorder?.writer.flush()
            state.withLock {
                $0.held[camera] = nil
                index.fence.set($0.held.mapValues(\.token))
            }
            try index.releaseLease(cameraID: camera, node: name, token: h.token)
            logger.info("node \(name): gave camera \(camera) up to balance the nodes")
        }
        defer { if changed { publish() } }
        for camera in plan.acquire {
            let asked = Self.monotonic()
            guard let token = try index.acquireLease(cameraID: camera, node: name, leaseSeconds: timing.leaseSeconds)
            else { continue }
            state.withLock { $0.held[camera] = Held(token: token, deadline: asked + timing.deadlineSeconds) }
            logger.info("node \(name): took camera \(camera) (lease token \(token))")
            changed = true
        }
    }

    /// Stops every camera whose deadline has passed (PostgreSQL unreachable, or slow).
    func enforceDeadlines() {
        let now = Self.monotonic()
        let expired = state.withLock { s -> [Int64] in
            let gone = s.held.filter { now >= $0.value.deadline }.map(\.key)
            for c in gone { s.held[c] = nil }
            return gone
        }
        guard !expired.isEmpty else { return }
        logger.error("node \(name): cannot confirm its leases in time: stopping cameras \(expired.sorted())")
        publish(wait: false)
    }

    /// Hands the holdings to the index's fence and the recorder.
    private func publish(wait: Bool = true) {
        state.withLock { index.fence.set($0.held.mapValues(\.token)) }
        recorder?.ownershipChanged(wait: wait)
    }

    static func monotonic() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
}
