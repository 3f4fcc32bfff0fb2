import Foundation
import GRDB

/// One change made through the API or the CLI: who, what, when.
public struct AuditRecord: Codable, Sendable, Equatable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "audit"
    public var id: Int64?
    public var time90k: Int64
    public var user: String
    public var action: String
    public var target: String?
    /// JSON, secrets already redacted.
    public var detail: String?
    public var address: String?

    public init(time90k: Int64, user: String, action: String, target: String?, detail: String?, address: String?) {
        self.time90k = time90k
        self.user = user
        self.action = action
        self.target = target
        self.detail = detail
        self.address = address
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}
