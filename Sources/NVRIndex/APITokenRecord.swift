import Foundation
import GRDB

/// A bearer token for scripts and integrations, acting as its user.
public struct APITokenRecord: Codable, Sendable, Equatable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "api_token"
    public var id: Int64?
    public var name: String
    public var tokenHash: Data
    public var userID: Int64
    public var created90k: Int64
    public var lastUsed90k: Int64?

    enum CodingKeys: String, CodingKey {
        case id, name
        case tokenHash = "token_hash"
        case userID = "user_id"
        case created90k
        case lastUsed90k = "last_used90k"
    }

    public init(name: String, tokenHash: Data, userID: Int64, created90k: Int64) {
        self.name = name
        self.tokenHash = tokenHash
        self.userID = userID
        self.created90k = created90k
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}
