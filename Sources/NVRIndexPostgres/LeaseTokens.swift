import Synchronization

/// The camera leases a node believes it holds, with their fencing tokens (camera id → token),
/// kept by the node's lease keeper and read by the index's recording writes. nil until the node
/// takes part in leasing: then no fencing (a single NVR on PostgreSQL).
///
/// `awaiting` are cameras the node records on past its deadline because PostgreSQL answers no
/// node (design/scale-out.md, "Recording through an outage of PostgreSQL"): their writes wait in the index writer
/// until a heartbeat either confirms the lease (nobody took it) or finds it lost. Until then no
/// batch is applied: a batch applied early would refuse them (their leases have expired on the
/// server) and drop the rows of what they recorded.
public final class LeaseTokens: Sendable {
    private struct State {
        var held: [Int64: Int64]?
        var awaiting: Set<Int64> = []
    }
    private let state = Mutex(State())

    public init() {}

    /// What the node holds now (nil: not leasing).
    public var current: [Int64: Int64]? { state.withLock { $0.held } }

    /// Cameras recorded past their deadline whose leases no heartbeat has confirmed yet.
    public var awaiting: Set<Int64> { state.withLock { $0.awaiting } }

    public func set(_ tokens: [Int64: Int64], awaiting: Set<Int64> = []) {
        state.withLock {
            $0.held = tokens
            $0.awaiting = awaiting
        }
    }
}
