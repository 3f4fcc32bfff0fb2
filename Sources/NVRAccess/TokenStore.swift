import Foundation
import NVRIndex
import NVRTime
import Synchronization

/// Bearer tokens for scripts and integrations (Home Assistant and the like): created by an
/// admin for a user, shown once, stored as a hash, acting with that user's role.
public final class TokenStore: Sendable {
    public let index: any AccessStore
    private let touched = Mutex<[Int64: Int64]>([:])

    /// Tokens start with this, so they are easy to recognise (and to keep out of logs).
    public static let prefix = "nvr_"

    public init(index: any AccessStore) { self.index = index }

    public func create(for user: UserRecord, name: String) throws -> (token: String, record: APITokenRecord) {
        guard let id = user.id else { throw AccessError.notFound("user has no id") }
        guard (1...64).contains(name.count) else { throw AccessError.badRequest("a token name has 1 to 64 characters") }
        let token = Self.prefix + Secrets.randomToken()
        let r = try index.addToken(
            APITokenRecord(name: name, tokenHash: Secrets.hash(token), userID: id, created90k: Time90k.now()))
        return (token, r)
    }

    public func identify(token: String) throws -> Identity? {
        guard token.hasPrefix(Self.prefix), token.utf8.count <= 128,
            let (t, u) = try index.token(hash: Secrets.hash(token)),
            let id = t.id
        else { return nil }
        let now = Time90k.now()
        let due = touched.withLock { m -> Bool in
            if let last = m[id], now - last < 60 * 90_000 { return false }
            m[id] = now
            return true
        }
        if due { try? index.touchToken(id: id, at: now) }
        return Accounts.identity(u, via: .token(id: id))
    }
}
