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
        /// The changed pixels' bounding box, normalised; nil when none. Encoded as
        /// [x, y, width, height] (kept as four numbers: making a look allocates nothing).
        public var region: MotionRegion?

        enum CodingKeys: String, CodingKey { case time90k, changed, threshold, inMotion, box }
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(time90k, forKey: .time90k)
            try c.encode(changed, forKey: .changed)
            try c.encode(threshold, forKey: .threshold)
            try c.encode(inMotion, forKey: .inMotion)
            try c.encode(region.map { [$0.x, $0.y, $0.width, $0.height] }, forKey: .box)
        }
    }

    /// How long after a read looks are still published.
    static let interestSeconds = 10.0
    /// A look older than this is not the detector's now (it stopped, or nobody asked for a while).
    static let freshMillis: Int64 = 2000
    private let askedMillis = Atomic<Int64>(Int64.min)
    private let newest = Mutex<(look: Look, millis: Int64)?>(nil)

    public init() {}

    /// Whether anyone asked recently (from the packet thread: one atomic load).
    public var isWatched: Bool {
        let asked = askedMillis.load(ordering: .relaxed)
        return asked != .min && Self.nowMillis() - asked < Int64(Self.interestSeconds * 1000)
    }

    public func publish(_ look: Look) {
        let now = Self.nowMillis()
        newest.withLock { $0 = (look, now) }
    }

    /// The newest look, if it is less than `freshMillis` old (nil until the detector has looked
    /// since someone asked, and once it stops); asking keeps the looks coming for
    /// `interestSeconds`.
    public func read() -> Look? {
        let now = Self.nowMillis()
        askedMillis.store(now, ordering: .relaxed)
        return newest.withLock { n in n.flatMap { now - $0.millis < Self.freshMillis ? $0.look : nil } }
    }

    /// Forgets the newest look (the detector stopped: a stale box would mislead).
    public func clear() { newest.withLock { $0 = nil } }

    private static func nowMillis() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}
