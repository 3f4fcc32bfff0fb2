import Foundation
import NIOCore
import Synchronization

struct ProbeState: Sendable {
    /// Monotonic seconds of the last answer, and whether PostgreSQL answered.
    var last: (at: Double, answered: Bool)?
    /// When the question in flight was asked.
    var askingSince: Double?
}

extension PostgresIndex {
    /// Whether PostgreSQL answers a `SELECT 1` now: what a node tells the others that ask
    /// during an outage (design/scale-out.md, "Recording through an outage of PostgreSQL").
    /// One question at a time on a thread of its own (a connection to a server that vanished
    /// can hang for the connect timeout); an answer younger than half a second is reused; a
    /// question unanswered after `seconds` counts as "no" at once, for as long as it hangs, so
    /// a caller never waits longer than that.
    public func answersNow(within seconds: Double = 0.7) -> Bool {
        let asked = Self.monotonic()
        let start = probeState.withLock { s -> Bool? in
            if let last = s.last, asked - last.at < 0.5 { return nil }
            if let since = s.askingSince { return asked - since >= seconds ? false : nil }
            s.askingSince = asked
            return true
        }
        if let last = probeState.withLock({ $0.last }), asked - last.at < 0.5 { return last.answered }
        if start == false { return false }
        if start == true {
            Thread.detachNewThread { [self] in
                let answered =
                    (try? autocommit { try $0.execute("SELECT 1", timeout: .seconds(2)) }) != nil
                probeState.withLock { $0 = ProbeState(last: (Self.monotonic(), answered), askingSince: nil) }
            }
        }
        while Self.monotonic() - asked < seconds {
            if let last = probeState.withLock({ $0.last }), last.at >= asked { return last.answered }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return false
    }

    static func monotonic() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
}
