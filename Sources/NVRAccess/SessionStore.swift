import Foundation
import NVRIndex
import NVRTime
import Synchronization

/// Login sessions (the page's cookie), kept in the index so they survive a restart, and
/// revocable. A session lasts `lifetime` past its last use; its row is touched at most once
/// a minute, so requests do not each write to the index.
public final class SessionStore: Sendable {
    public let index: any AccessStore
    public let lifetime90k: Int64
    private let touched = Mutex<[Int64: Int64]>([:])

    public init(index: any AccessStore, lifetimeDays: Int = 30) {
        self.index = index
        lifetime90k = Int64(lifetimeDays) * 86_400 * 90_000
    }

    /// A new session for `user`: the cookie's token (shown once, stored hashed) and its CSRF token.
    public func create(user: UserRecord, address: String?, userAgent: String?) throws -> (
        token: String, csrf: String, session: SessionRecord
    ) {
        guard let id = user.id else { throw AccessError.notFound("user has no id") }
        let token = Secrets.randomToken()
        let csrf = Secrets.randomToken()
        let now = Time90k.now()
        // Logins are where sessions come from: expired ones go here, so the table holds only
        // live sessions and those that expired since the last login.
        try index.removeExpiredSessions(at: now)
        let s = try index.addSession(
            SessionRecord(
                tokenHash: Secrets.hash(token), userID: id, csrf: csrf, created90k: now,
                expires90k: now + lifetime90k, address: address.map { String($0.prefix(64)) },
                userAgent: userAgent.map { String($0.prefix(200)) }))
        return (token, csrf, s)
    }

    /// Who a cookie's token belongs to, or nil for an unknown, expired or revoked one.
    public func identify(token: String) throws -> Identity? {
        let now = Time90k.now()
        guard token.utf8.count <= 128, let (s, u) = try index.session(tokenHash: Secrets.hash(token), at: now),
            let id = s.id
        else { return nil }
        let due = touched.withLock { t -> Bool in
            if let last = t[id], now - last < 60 * 90_000 { return false }
            if t.count > 10_000 { t.removeAll() }
            t[id] = now
            return true
        }
        if due { try? index.touchSession(id: id, at: now, expires90k: now + lifetime90k) }
        return Accounts.identity(u, via: .session(id: id, csrf: s.csrf))
    }

    public func revoke(id: Int64) throws {
        try index.removeSession(id: id)
        touched.withLock { _ = $0.removeValue(forKey: id) }
    }
}
