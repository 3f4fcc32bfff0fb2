import Synchronization

/// The camera leases a node believes it holds, with their fencing tokens (camera id → token),
/// kept by the node's lease keeper and read by the index's recording writes. nil until the node
/// takes part in leasing: then no fencing (a single NVR on PostgreSQL).
public final class LeaseTokens: Sendable {
    private let held = Mutex<[Int64: Int64]?>(nil)

    public init() {}

    /// What the node holds now (nil: not leasing).
    public var current: [Int64: Int64]? { held.withLock { $0 } }

    public func set(_ tokens: [Int64: Int64]) { held.withLock { $0 = tokens } }
}
