import Foundation
import GRDB

/// A login session (the page's cookie): found by the SHA-256 of its token.
public struct SessionRecord: Codable, Sendable, Equatable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "session"
    public var id: Int64?
    public var tokenHash: Data
    public var userID: Int64
    /// The token a cookie-authenticated change must carry in X-CSRF-Token.
    public var csrf: String
    public var created90k: Int64
    public var lastSeen90k: Int64
    public var expires90k: Int64
    public var address: String?
    public var userAgent: String?

    enum CodingKeys: String, CodingKey {
        case id
        case tokenHash = "token_hash"
        case userID = "user_id"
        case csrf, created90k
        case lastSeen90k = "last_seen90k"
        case expires90k, address
        case userAgent = "user_agent"
    }

    public init(
        tokenHash: Data, userID: Int64, csrf: String, created90k: Int64, expires90k: Int64, address: String?,
        userAgent: String?
    ) {
        self.tokenHash = tokenHash
        self.userID = userID
        self.csrf = csrf
        self.created90k = created90k
        self.lastSeen90k = created90k
        self.expires90k = expires90k
        self.address = address
        self.userAgent = userAgent
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}
