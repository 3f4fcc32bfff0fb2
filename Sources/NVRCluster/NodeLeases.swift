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
///
/// Unless PostgreSQL answers no node: when the node's renewals fail, a third thread asks the
/// other live nodes (`GET /api/node`). If every one of them says it cannot reach PostgreSQL
/// either, the guard lets the cameras record on past their deadline instead of stopping them,
/// and their rows wait in the index writer; the next heartbeat that gets through renews each
/// lease still carrying this node's token (nobody took the camera meanwhile), and those rows
/// are written in order. A camera whose lease another node took meanwhile is stopped, its rows
/// refused; so is one another node says it holds while this node's renewals still fail. A node
/// that any other node says reaches PostgreSQL (cut off alone), or that cannot ask one, stops
/// at the deadline as before.
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
        /// together see each other and share; and again after PostgreSQL answers once more
        /// following failed heartbeats, so every node renews what it recorded through the outage
        /// before any takes another's camera.
        public var joinSeconds: Double = 4
        /// How long a question to another node may take (it answers within 0.7 s).
        public var askSeconds: Double = 1.5
        /// How long the index writer keeps rows PostgreSQL cannot take yet in memory (then drops
        /// them, as a single server does after 2 minutes) when its journal cannot be written;
        /// journaled rows are never dropped.
        public var outageSeconds: Double = 600
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
        /// The index writer's mark when its recording stopped for that: the writes to wait for.
        var releaseMark: UInt64?
        /// Recorded on past its deadline because no node reaches PostgreSQL: its writes wait
        /// (the fence's `awaiting`) until a heartbeat renews the lease or finds it taken.
        var recordingThroughOutage = false
    }
    /// What another node said about PostgreSQL and the cameras it holds, and when it was asked
    /// (monotonic seconds).
    struct PeerAnswer {
        var at: Double
        var reachesIndex: Bool
        var cameras: Set<Int64>
    }
    struct State {
        var held: [Int64: Held] = [:]
        var joined: Double = 0
        var lastRenewal: Double?
        /// A heartbeat failed since the last one that got through.
        var failing = false
        /// Balances since the cluster-wide jobs last had their turn.
        var sinceJobs = 0
        /// Cameras recorded through an outage were stopped: their writes must be refused (the
        /// writer flushed) before this node takes any camera again.
        var flushBeforeTaking = false
        /// Shutting down: heartbeats go on (they settle cameras recorded through an outage, whose
        /// last writes wait for that), balancing does not.
        var balancing = true
        /// The other live nodes at the last balance, with their advertised URLs.
        var peers: [String: String?] = [:]
        /// Their answers since this node's renewals began to fail.
        var answers: [String: PeerAnswer] = [:]
    }
    private let state = Mutex(State())
    private let keeper = Worker(name: "leases")
    private let guardian = Worker(name: "lease guard")
    private let mounts = Worker(name: "node storage")
    private let asker = Worker(name: "peer questions")
    /// Other nodes' footage, fetched when their storage is not mounted here.
    private let footage = Mutex<PeerFootage?>(nil)
    /// The certificates of the nodes reached over `https://`.
    private let trust = PeerTrust()

    /// How long the lease keeper waits for the index writer's rows (the journal's too) before
    /// it gives cameras up or takes one: then it tries again at the next balance. Short, as the
    /// keeper must renew within `deadlineSeconds` (at most three such waits a heartbeat).
    static let flushSeconds: Double = 0.3

    public init(name: String, index: PostgresIndex, timing: Timing = Timing(), logger: Logger) {
        self.name = name
        self.index = index
        self.timing = timing
        self.logger = logger
    }

    public func mayRecord(_ cameraID: Int64) -> Bool {
        let now = Self.monotonic()
        return state.withLock {
            $0.held[cameraID].map { ($0.recordingThroughOutage || now < $0.deadline) && !$0.releasing } ?? false
        }
    }

    /// The cameras held now, with their tokens.
    public var held: [Int64: Int64] { state.withLock { $0.held.mapValues(\.token) } }

    /// Registers the node (dropping any lease an earlier process of this name left) and makes
    /// `recorder` record only what this node holds: before the recorder starts, so it starts no
    /// camera on its own.
    /// `certificatePEM`: what this node serves HTTPS with (nil: plain HTTP), published for the
    /// others to trust (PeerTrust).
    public func attach(_ recorder: Recorder, advertiseURL: String?, storageID: String, certificatePEM: String? = nil)
        throws
    {
        self.recorder = recorder
        recorder.writer.giveUpSeconds = timing.outageSeconds
        // Read now: during an outage the nodes need it to ask each other.
        _ = try? index.nodeKey()
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
        try PeerTrust.publish(index, node: name, certificatePEM: certificatePEM)
        index.fence.set([:])
        let peers = PeerFootage(index: index, storage: recorder.storage, trust: trust, logger: logger)
        footage.withLock { $0 = peers }
        recorder.storage.nodes.setRemote { node, segment in try peers.file(node: node, segment: segment) }
        refreshStorage((try? index.nodes()) ?? [])
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
        asker.start { [self] in
            while asker.wait(seconds: 0.25) { askPeersIfRenewalsFail() }
        }
        mounts.start { [self] in
            var passes = 0
            while mounts.wait(seconds: 5) {
                // Its own thread: a dead peer's hard NFS mount may block a read for good.
                if let nodes = try? index.nodes() { refreshStorage(nodes) }
                passes += 1
                if passes % 60 == 0 { footage.withLock { $0 }?.prune() }
            }
        }
    }

    /// Stops taking and giving up cameras (shutdown begins): held leases are still renewed and
    /// guarded, and given back by `stop`.
    public func stopBalancing() { state.withLock { $0.balancing = false } }

    /// Gives back the leases held (the recorder has stopped its cameras) and says this node is
    /// leaving, so the others take its cameras at once.
    public func stop() {
        keeper.stop()
        guardian.stop()
        mounts.stop()
        asker.stop()
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
            state.withLock { $0.failing = true }
            return
        }
        var lost: [Int64] = []
        var kept: [Int64] = []
        var lostThroughOutage = false
        state.withLock { s in
            s.lastRenewal = started
            s.answers = [:]
            if s.failing {
                // Back after failures: let every node renew first (Timing.joinSeconds).
                s.failing = false
                s.joined = started
            }
            for (camera, h) in s.held {
                if let token = renewed[camera], token == h.token {
                    s.held[camera]?.deadline = started + timing.deadlineSeconds
                    if h.recordingThroughOutage {
                        s.held[camera]?.recordingThroughOutage = false
                        kept.append(camera)
                    }
                } else {
                    s.held[camera] = nil
                    lost.append(camera)
                    lostThroughOutage = lostThroughOutage || h.recordingThroughOutage
                }
            }
        }
        if !kept.isEmpty {
            logger.notice(
                "node \(name): PostgreSQL answers again and cameras \(kept.sorted()) kept their leases: writing what they recorded meanwhile"
            )
        }
        if !lost.isEmpty {
            logger.warning("node \(name): lost the leases of cameras \(lost.sorted())")
            publish()
            // Their writes queued meanwhile are refused now, before this node could take one of
            // them again (they must not land under a new lease). Not waited for long here: the
            // heartbeat must go on (it settles the leases the writer may wait for); if they are
            // not written by then, the balance waits for them before taking any camera.
            if lostThroughOutage, recorder?.writer.flush(applied: Self.flushSeconds) == false {
                state.withLock { $0.flushBeforeTaking = true }
            }
        } else if !kept.isEmpty {
            updateFence()
        }
        guard state.withLock({ $0.balancing && started - $0.joined >= timing.joinSeconds }) else { return }
        do { try balance(renewedAt: started) } catch {
            logger.warning("node \(name): cannot balance cameras: \(error)")
        }
    }

    /// Takes free cameras up to this node's share and gives up what is over it.
    func balance(renewedAt started: Double) throws {
        let nodes = try index.nodes()
        let live = Set(nodes.filter { $0.heartbeatAge < timing.leaseSeconds }.map(\.name)).union([name])
        state.withLock { s in
            s.peers = Dictionary(
                uniqueKeysWithValues: nodes.filter { $0.name != name && live.contains($0.name) }.map {
                    ($0.name, $0.advertiseURL)
                })
        }
        let cameras = try index.cameras().filter(\.enabled)
        let leases = Dictionary(uniqueKeysWithValues: try index.leases().map { ($0.cameraID, $0) })
        let plan = LeasePlan(node: name, liveNodes: live, cameras: cameras, leases: leases)
        var changed = false
        // A release that waited in vain for the camera's rows, no longer wanted: it records again.
        let unreleased = state.withLock { s -> [Int64] in
            let back = s.held.filter { $0.value.releasing && !plan.release.contains($0.key) }.map(\.key)
            for camera in back {
                s.held[camera]?.releasing = false
                s.held[camera]?.releaseMark = nil
            }
            return back
        }
        if !unreleased.isEmpty { changed = true }
        let releasing = state.withLock { s in plan.release.compactMap { c in s.held[c].map { (c, $0.token) } } }
        if !releasing.isEmpty {
            // Stop recording them and let their last writes land, then give the leases up: never
            // two writers. Rows still in the journal (the index answered the heartbeat, the writer
            // not yet): the leases are kept, the cameras stopped, and the next balance tries again.
            // Stopped once (publish waits for that), marked once: a later balance waits for the
            // same writes, not for what the other cameras recorded since.
            let stopping = state.withLock { s -> Bool in
                var any = false
                for (camera, _) in releasing where s.held[camera]?.releasing == false {
                    s.held[camera]?.releasing = true
                    any = true
                }
                return any
            }
            if stopping {
                publish()
                let mark = recorder?.writer.handedOverMark
                state.withLock { s in
                    for (camera, _) in releasing where s.held[camera]?.releaseMark == nil {
                        s.held[camera]?.releaseMark = mark
                    }
                }
            }
            let mark = state.withLock { s in releasing.compactMap { s.held[$0.0]?.releaseMark }.max() }
            let landed = mark.map { recorder?.writer.flush(through: $0, applied: Self.flushSeconds) ?? true } ?? true
            if landed {
                for (camera, token) in releasing {
                    state.withLock { $0.held[camera] = nil }
                    updateFence()
                    try index.releaseLease(cameraID: camera, node: name, token: token)
                    logger.info("node \(name): gave camera \(camera) up to balance the nodes")
                }
            }
        }
        defer { if changed { publish() } }
        runClusterJobs()
        if !plan.acquire.isEmpty, state.withLock({ $0.flushBeforeTaking }) {
            // Writes of cameras stopped while recorded through an outage may still be queued
            // (a batch hung on a dead connection, rows in the journal): refused now, not under a
            // lease taken anew. Not yet: no camera is taken this time.
            guard recorder?.writer.flush(applied: Self.flushSeconds) != false else { return }
            state.withLock { $0.flushBeforeTaking = false }
        }
        for camera in plan.acquire {
            let asked = Self.monotonic()
            guard let token = try index.acquireLease(cameraID: camera, node: name, leaseSeconds: timing.leaseSeconds)
            else { continue }
            state.withLock { $0.held[camera] = Held(token: token, deadline: asked + timing.deadlineSeconds) }
            logger.info("node \(name): took camera \(camera) (lease token \(token))")
            changed = true
        }
    }

    /// Every 10th balance (15 s), the jobs for the whole cluster, which one node at a time
    /// runs (the others skip that turn): after a node has balanced, so never while nodes renew
    /// their leases after an outage.
    func runClusterJobs() {
        let due = state.withLock { s -> Bool in
            s.sinceJobs += 1
            guard s.sinceJobs >= 10 else { return false }
            s.sinceJobs = 0
            return true
        }
        guard due else { return }
        do {
            if let closed = try index.closeEventsNobodyRecords(), closed > 0 {
                logger.notice("node \(name): closed \(closed) events left open on cameras no node records")
            }
        } catch {
            logger.warning("node \(name): cannot close events left open: \(error)")
        }
    }

    /// At each camera's deadline: records on through an outage every other node confirms,
    /// stops it otherwise; and stops what records on through an outage once another node says
    /// it reaches PostgreSQL (this node is the one cut off).
    func enforceDeadlines() {
        let now = Self.monotonic()
        var stopped: [Int64] = []
        var recordingOn: [Int64] = []
        var reachedBy: String?
        state.withLock { s in
            let outage = Self.outageConfirmed(s, renewSeconds: timing.renewSeconds)
            let reaching = s.answers.filter { $0.value.reachesIndex && now - $0.value.at < 3 }
            reachedBy = reaching.keys.sorted().first
            // Another node reaches PostgreSQL and holds one of the cameras this node records
            // through an outage: this node is the one cut off, and that camera is recorded there.
            let takenElsewhere = reaching.values.reduce(into: Set<Int64>()) { $0.formUnion($1.cameras) }
            for (camera, h) in s.held {
                if h.recordingThroughOutage {
                    if takenElsewhere.contains(camera) {
                        s.held[camera] = nil
                        s.flushBeforeTaking = true
                        stopped.append(camera)
                    }
                } else if now >= h.deadline {
                    if outage && !h.releasing {
                        s.held[camera]?.recordingThroughOutage = true
                        recordingOn.append(camera)
                    } else {
                        s.held[camera] = nil
                        stopped.append(camera)
                    }
                }
            }
        }
        if !recordingOn.isEmpty {
            logger.warning(
                "node \(name): PostgreSQL answers no node: cameras \(recordingOn.sorted()) record on, their rows wait for it"
            )
            updateFence()
        }
        guard !stopped.isEmpty else { return }
        let why = reachedBy.map { " (node \($0) reaches PostgreSQL)" } ?? ""
        logger.error("node \(name): cannot confirm its leases in time: stopping cameras \(stopped.sorted())\(why)")
        publish(wait: false)
    }

    /// True when every other live node has said, since this node's renewals began to fail,
    /// that it cannot reach PostgreSQL either (none to ask: true; one that cannot be asked:
    /// false).
    static func outageConfirmed(_ s: State, renewSeconds: Double) -> Bool {
        guard let last = s.lastRenewal else { return false }
        return s.peers.keys.allSatisfy { peer in
            s.answers[peer].map { !$0.reachesIndex && $0.at >= last + renewSeconds } ?? false
        }
    }

    /// While renewals fail (or cameras record through an outage), asks each other live node
    /// whether it reaches PostgreSQL.
    func askPeersIfRenewalsFail() {
        let now = Self.monotonic()
        let (asking, peers) = state.withLock { s -> (Bool, [String: String?]) in
            let overdue = s.lastRenewal.map { now - $0 > timing.renewSeconds + 0.2 } ?? false
            let asking = !s.held.isEmpty && (overdue || s.held.values.contains { $0.recordingThroughOutage })
            return (asking, s.peers)
        }
        guard asking, let key = try? index.nodeKey() else { return }  // read at start: no query now
        for (peer, url) in peers.sorted(by: { $0.key < $1.key }) {
            let asked = Self.monotonic()
            let answer = url.flatMap {
                PeerQuestion.ask($0, key: key, timeout: timing.askSeconds, pinned: trust.certificates(node: peer))
            }
            state.withLock { s in
                // Asked before the last renewal that got through: that renewal cleared the
                // answers, and this one is older than it.
                if let last = s.lastRenewal, asked < last { return }
                if let answer, answer.node == peer {
                    s.answers[peer] = PeerAnswer(at: asked, reachesIndex: answer.reachesIndex, cameras: answer.cameras)
                } else {
                    s.answers[peer] = nil
                }
            }
        }
    }

    /// Which other nodes' storage is mounted here, and where the others are reached.
    private func refreshStorage(_ nodes: [NodeRecord]) {
        guard let recorder else { return }
        NodeStorage.refresh(recorder.storage, me: name, nodes: nodes)
        trust.refresh(index, nodes: nodes.filter { $0.advertiseURL?.hasPrefix("https://") == true }.map(\.name))
        footage.withLock { $0 }?.update(nodes)
    }

    /// Hands the holdings to the index's fence.
    private func updateFence() {
        state.withLock {
            index.fence.set(
                $0.held.mapValues(\.token), awaiting: Set($0.held.filter { $0.value.recordingThroughOutage }.keys))
        }
    }

    /// Hands the holdings to the index's fence and the recorder.
    private func publish(wait: Bool = true) {
        updateFence()
        recorder?.ownershipChanged(wait: wait)
    }

    static func monotonic() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
}
