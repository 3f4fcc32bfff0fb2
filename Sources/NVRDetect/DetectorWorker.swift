import Foundation
import NVRWorker

/// The server's one detector: a thread that runs the model on pictures the cameras offer it,
/// one camera at a time in turn. Each camera has a slot holding one picture; a camera that
/// offers a picture while its slot is still full (the detector is busy) has it skipped and
/// counted. A camera never waits for the detector: an offer takes the worker's lock only to
/// look at the slot's state, never while the model runs.
///
/// The model is loaded on the worker's thread when it starts; until it has, and when it cannot
/// be, offers are refused and `failure` says why.
public final class DetectorWorker: @unchecked Sendable {
    // @unchecked Sendable: `slots`, `state` and each slot's `full` are guarded by the worker's
    // lock (`worker.locked`); a slot's picture belongs to the camera while empty and to the
    // worker while full.
    public enum State: Sendable, Equatable {
        case loading
        case ready(labels: [String], layout: String, input: String)
        case failed(String)
    }

    /// What the worker needs to make its model (on its own thread).
    public typealias Loader = @Sendable () throws -> DetectorModel

    private let worker = Worker(name: "detector")
    private let loader: Loader
    private var slots: [DetectorSlot] = []
    private var state: State = .loading
    private var next = 0
    /// Told once the model has loaded or failed to.
    private var settledHandlers: [@Sendable (State) -> Void] = []
    public let stats = DetectorStats()
    /// How often idle slots are ticked (their trackers end objects no longer seen).
    public var tickSeconds = 0.5

    public init(loader: @escaping Loader) { self.loader = loader }

    public var currentState: State { worker.locked { state } }

    public func start() { worker.start { [self] in run() } }

    public func stop() { worker.stop() }

    /// Calls `f` once the model has loaded or failed to (at once if it has), on the worker's
    /// thread or the caller's.
    public func whenSettled(_ f: @escaping @Sendable (State) -> Void) {
        let settled: State? = worker.locked {
            if case .loading = state {
                settledHandlers.append(f)
                return nil
            }
            return state
        }
        if let settled { f(settled) }
    }

    /// A camera's slot. `handler` gets each picture's detections (boxes in the whole picture's
    /// coordinates) and, with an empty list and `looked` false, a regular tick; on the worker's
    /// thread.
    public func slot(camera: String, handler: @escaping @Sendable (DetectorSlot.Result) -> Void) -> DetectorSlot {
        let slot = DetectorSlot(camera: camera, worker: self, handler: handler)
        worker.locked { slots.append(slot) }
        return slot
    }

    func remove(_ slot: DetectorSlot) { worker.locked { slots.removeAll { $0 === slot } } }

    /// Called by a slot under no lock: marks it full if the model is ready and it was empty.
    func take(_ slot: DetectorSlot) -> (width: Int, height: Int)? {
        worker.locked {
            guard case .ready = state, let size = slot.size, !slot.full else { return nil }
            return size
        }
    }

    func submit(_ slot: DetectorSlot) { worker.locked { slot.full = true } }

    /// The model loaded, or not: the state, then whoever waited for it.
    private func settle(_ s: State) {
        let handlers = worker.locked {
            state = s
            defer { settledHandlers = [] }
            return settledHandlers
        }
        for f in handlers { f(s) }
    }

    private func run() {
        let model: DetectorModel
        do {
            model = try loader()
        } catch {
            settle(.failed("\(error)"))
            return
        }
        // Sizes first: a slot is offered frames only once the state is ready as well.
        worker.locked { for s in slots { s.size = (model.inputWidth, model.inputHeight) } }
        settle(
            .ready(labels: model.labels, layout: model.layout.name, input: "\(model.inputWidth)x\(model.inputHeight)"))
        var lastTick = Date()
        while !worker.isStopping {
            _ = worker.wait(seconds: tickSeconds) { slots.contains { $0.full } }
            // Set sizes for slots added after loading, and pick the next full slot in turn.
            let picked: DetectorSlot? = worker.locked {
                for s in slots where s.size == nil { s.size = (model.inputWidth, model.inputHeight) }
                guard !slots.isEmpty else { return nil }
                for k in 0..<slots.count {
                    let s = slots[(next + k) % slots.count]
                    if s.full {
                        next = (next + k + 1) % slots.count
                        return s
                    }
                }
                return nil
            }
            if let slot = picked { detect(slot, model) }
            if Date().timeIntervalSince(lastTick) >= tickSeconds {
                lastTick = Date()
                for s in worker.locked({ slots }) { s.handler(.init(detections: [], at: nil)) }
            }
        }
    }

    private func detect(_ slot: DetectorSlot, _ model: DetectorModel) {
        let start = DispatchTime.now().uptimeNanoseconds
        var found: [Detection] = []
        var failure: String?
        if let picture = slot.picture {
            do {
                found = try model.detect(
                    rgb: UnsafeBufferPointer(start: picture, count: model.inputWidth * model.inputHeight * 3),
                    minScore: slot.minScore, wanted: slot.wanted)
            } catch { failure = "\(error)" }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let crop = slot.crop
        let at = slot.time90k
        stats.record(camera: slot.camera, seconds: seconds, found: found, failure: failure)
        // The slot stays full until its results are handled: the camera offers its next
        // picture once this one has been looked at and tracked.
        slot.handler(
            .init(
                detections: found.map { d in
                    var d = d
                    d.box = d.box.placed(in: crop)
                    return d
                }, at: at))
        worker.locked { slot.full = false }
    }
}

/// One camera's place at the detector: one picture at a time, of the model's input size.
public final class DetectorSlot: @unchecked Sendable {
    // @unchecked Sendable: see DetectorWorker.
    public struct Result: Sendable {
        public var detections: [Detection]
        /// When the picture was taken (90 kHz wall clock); nil for a tick.
        public var at: Int64?
    }

    public let camera: String
    private unowned let worker: DetectorWorker
    let handler: @Sendable (Result) -> Void
    var full = false
    var size: (width: Int, height: Int)? {
        didSet {
            if let size, picture == nil { picture = .allocate(capacity: size.width * size.height * 3) }
        }
    }
    var picture: UnsafeMutablePointer<UInt8>?
    var crop = Box(x: 0, y: 0, width: 1, height: 1)
    var time90k: Int64 = 0
    /// Set by the camera before offering (read by the worker while the slot is full).
    public var minScore = 0.6
    public var wanted: Set<String> = []

    init(camera: String, worker: DetectorWorker, handler: @escaping @Sendable (Result) -> Void) {
        self.camera = camera
        self.worker = worker
        self.handler = handler
    }

    deinit { picture?.deallocate() }

    /// Offers a picture taken at `t`: `fill` writes it (width × height packed RGB) and returns
    /// the region of the whole picture it shows. Returns false, without calling `fill`, when
    /// the detector is busy with this camera's previous picture (counted as skipped) or has no
    /// model.
    @discardableResult
    public func offer(at t: Int64, fill: (UnsafeMutablePointer<UInt8>, Int, Int) throws -> Box) -> Bool {
        guard let size = worker.take(self), let picture else {
            if case .ready = worker.currentState { worker.stats.skipped(camera: camera) }
            return false
        }
        do { crop = try fill(picture, size.width, size.height) } catch { return false }
        time90k = t
        worker.submit(self)
        return true
    }

    /// Leaves the detector (the camera stopped).
    public func close() { worker.remove(self) }
}
