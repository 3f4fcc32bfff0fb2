import Foundation
import GRDB

/// A person (or a script) who may use the NVR: `admin` may do everything, `viewer` may watch
/// (live, recordings, events, snapshots) the cameras in `cameras`, or every camera when nil.
public struct UserRecord: Codable, Sendable, Equatable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "user"
    public var id: Int64?
    public var name: String
    /// bcrypt; never leaves the index.
    public var passwordHash: String
    public var role: String
    /// JSON array of camera names, or nil for every camera.
    public var cameras: String?
    public var created90k: Int64
    public var passwordChanged90k: Int64

    enum CodingKeys: String, CodingKey {
        case id, name, passwordHash = "password_hash", role, cameras, created90k, passwordChanged90k = "password_changed90k"
    }

    public init(id: Int64? = nil, name: String, passwordHash: String, role: String, cameras: String? = nil, created90k: Int64) {
        self.id = id; self.name = name; self.passwordHash = passwordHash; self.role = role; self.cameras = cameras
        self.created90k = created90k; self.passwordChanged90k = created90k
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

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
        case id, tokenHash = "token_hash", userID = "user_id", csrf, created90k, lastSeen90k = "last_seen90k", expires90k, address
        case userAgent = "user_agent"
    }

    public init(tokenHash: Data, userID: Int64, csrf: String, created90k: Int64, expires90k: Int64, address: String?, userAgent: String?) {
        self.tokenHash = tokenHash; self.userID = userID; self.csrf = csrf; self.created90k = created90k
        self.lastSeen90k = created90k; self.expires90k = expires90k; self.address = address; self.userAgent = userAgent
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

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
        case id, name, tokenHash = "token_hash", userID = "user_id", created90k, lastUsed90k = "last_used90k"
    }

    public init(name: String, tokenHash: Data, userID: Int64, created90k: Int64) {
        self.name = name; self.tokenHash = tokenHash; self.userID = userID; self.created90k = created90k
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

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
        self.time90k = time90k; self.user = user; self.action = action; self.target = target; self.detail = detail; self.address = address
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// A range of a camera's recordings marked "keep": retention never deletes what it covers.
public struct ProtectedClipRecord: Codable, Sendable, Equatable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "protected_clip"
    public var id: Int64?
    public var cameraID: Int64
    public var start90k: Int64
    public var end90k: Int64
    public var eventID: Int64?
    public var note: String
    public var created90k: Int64
    public var createdBy: String

    enum CodingKeys: String, CodingKey {
        case id, cameraID = "camera_id", start90k, end90k, eventID = "event_id", note, created90k, createdBy = "created_by"
    }

    public init(cameraID: Int64, start90k: Int64, end90k: Int64, eventID: Int64?, note: String, created90k: Int64, createdBy: String) {
        self.cameraID = cameraID; self.start90k = start90k; self.end90k = end90k; self.eventID = eventID; self.note = note
        self.created90k = created90k; self.createdBy = createdBy
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}
