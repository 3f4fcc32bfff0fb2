import NVRPlayback
import Synchronization

/// Things built from the index, kept a few seconds by key: a player's many Range requests for
/// one view.mp4, or an export's HEAD and its GET, cost one build. Short-lived on purpose:
/// segments being written still grow. At most `capacity` entries; the oldest goes first.
final class RecentBuilds<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let entries = Mutex<[Key: (made: Double, value: Value)]>([:])
    private let ttl: Double
    private let capacity: Int
    /// Seconds on a monotonic clock (a test passes its own).
    private let clock: @Sendable () -> Double

    init(ttl: Double, capacity: Int, clock: @escaping @Sendable () -> Double = { monotonicSeconds() }) {
        self.ttl = ttl
        self.capacity = capacity
        self.clock = clock
    }

    /// The value built for `key` less than `ttl` ago, else `build()`'s (kept).
    func value(for key: Key, build: () throws -> Value) rethrows -> Value {
        let now = clock()
        if let hit = entries.withLock({ $0[key] }), now - hit.made < ttl { return hit.value }
        let built = try build()
        entries.withLock { e in
            e = e.filter { now - $0.value.made < ttl }
            if e.count >= capacity, let oldest = e.min(by: { $0.value.made < $1.value.made })?.key { e[oldest] = nil }
            e[key] = (now, built)
        }
        return built
    }
}
