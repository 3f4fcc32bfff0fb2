import Foundation
import NIOCore
import Synchronization

struct ProbeState: Sendable {
    /// Monotonic seconds of the last answer, and whether PostgreSQL answered.
    var last: (at: Double, answered: Bool)?
    var asking = false
}

extension PostgresIndex {
    /// Whether PostgreSQL answers a `SELECT 1` now, within `seconds`: what a node tells the
    /// others that ask during an outage (design/scale-out.md, "PostgreSQL unreachable"). One
    /// question at a time on a thread of its own (a connection to a server that vanished can
    /// hang for the connect timeout), and an answer younger than half a second is reused, so
    /// callers cannot pile up connections; no answer within `seconds` counts as none.
    public func answersNow(within seconds: Double = 1) -> Bool {
        let asked = Self.monotonic()
        let start = probeState.withLock { s -> Bool in
            if let last = s.last, asked - last.at < 0.5 { return false }
            guard !s.asking else { return false }
            s.asking = true
            return true
        }
        if let last = probeState.withLock({ $0.last }), asked - last.at < 0.5 { return last.answered }
        if start {
            Thread.detachNewThread { [self] in
                let answered =
                    (try? autocommit { try $0.execute("SELECT 1", timeout: .milliseconds(Int64(seconds * 1000))) })
                    != nil
                probeState.withLock { $0 = ProbeState(last: (Self.monotonic(), answered), asking: false) }
            }
        }
        while Self.monotonic() - asked < seconds {
            if let last = probeState.withLock({ $0.last }), last.at >= asked { return last.answered }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return false
    }

    static func monotonic() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
}
