import Foundation
import Synchronization

/// What a camera's motion detector saw in its newest look, for a person tuning it (the page
/// draws it over live video). The detector publishes only while someone has asked within the
/// last few seconds: unwatched, it costs one atomic load per look.
public final class MotionMonitor: Sendable {
    public struct Look: Sendable, Equatable, Encodable {
        /// When the look's picture was captured (wall clock, 90 kHz).
        public var time90k: Int64
        /// The share of the analysed picture that differed from the background (0…1).
        public var changed: Double
        /// The share that counts as motion (the camera's smallest area).
        public var threshold: Double
        /// Whether an event is in progress.
        public var inMotion: Bool
        /// The changed pixels' bounding box, normalised [x, y, width, height]; nil when none.
        public var box: [Double]?
    }

    /// How long after a read looks are still published.
    static let interestSeconds = 10.0
    private let askedMillis = Atomic<Int64>(Int64.min)
    private let newest = Mutex<Look?>(nil)

    public init() {}

    /// Whether anyone asked recently (from the packet thread: one atomic load).
    public var isWatched: Bool {
        let asked = askedMillis.load(ordering: .relaxed)
        return asked != .min && Self.nowMillis() - asked < Int64(Self.interestSeconds * 1000)
    }

    public func publish(_ look: Look) { newest.withLock { $0 = look } }

    /// The newest look (nil until the detector has looked since someone asked); asking keeps
    /// the looks coming for `interestSeconds`.
    public func read() -> Look? {
        askedMillis.store(Self.nowMillis(), ordering: .relaxed)
        return newest.withLock { $0 }
    }

    /// Forgets the newest look (the detector stopped: a stale box would mislead).
    public func clear() { newest.withLock { $0 = nil } }

    private static func nowMillis() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}
