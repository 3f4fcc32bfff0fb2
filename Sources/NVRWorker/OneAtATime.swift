import Synchronization

/// Jobs that must not overlap, by key (a camera's card sync, the detector's picture): `claim`
/// says whether this caller may start one; the caller releases it when done.
public final class OneAtATime: Sendable {
    private let held = Mutex<Set<String>>([])

    public init() {}

    public func claim(_ key: String) -> Bool { held.withLock { $0.insert(key).inserted } }

    public func release(_ key: String) { _ = held.withLock { $0.remove(key) } }

    /// Whether a job with this key runs now (a hint: it may start or end right after).
    public func isClaimed(_ key: String) -> Bool { held.withLock { $0.contains(key) } }
}
