import Foundation
import Synchronization

/// Slows down password guessing: after `free` failed logins in a row for a user name or from
/// an address, each further try must wait 2^(n − free) seconds (up to a minute) after the last
/// failure, and is answered 429 with Retry-After until then — without checking the password.
/// In memory: a restart forgets, which costs a guesser nothing it did not have.
public final class LoginThrottle: Sendable {
    private struct Entry {
        var failures: Int
        var last: Double
    }
    private let entries = Mutex<[String: Entry]>([:])
    public let free: Int
    public let maxWait: Double

    public init(free: Int = 5, maxWait: Double = 60) {
        self.free = free
        self.maxWait = maxWait
    }

    /// Seconds before `user` may try again from `address` (0: now).
    public func wait(user: String, address: String, now: Double = Date().timeIntervalSince1970) -> Double {
        entries.withLock { e in
            [Self.userKey(user), Self.addressKey(address)].map { key -> Double in
                guard let x = e[key], x.failures >= free else { return 0 }
                let delay = min(pow(2, Double(x.failures - free)), maxWait)
                return max(0, x.last + delay - now)
            }.max() ?? 0
        }
    }

    public func failed(user: String, address: String, now: Double = Date().timeIntervalSince1970) {
        entries.withLock { e in
            if e.count > 50_000 { e = e.filter { now - $0.value.last < 3600 } }
            for key in [Self.userKey(user), Self.addressKey(address)] {
                var x = e[key] ?? Entry(failures: 0, last: now)
                x.failures += 1
                x.last = now
                e[key] = x
            }
        }
    }

    public func succeeded(user: String, address: String) {
        entries.withLock { e in
            e[Self.userKey(user)] = nil
            e[Self.addressKey(address)] = nil
        }
    }

    private static func userKey(_ u: String) -> String { "u:" + u.lowercased() }
    private static func addressKey(_ a: String) -> String { "a:" + a }
}
