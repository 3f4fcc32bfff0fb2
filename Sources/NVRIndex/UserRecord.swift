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
    /// A viewer may pan, tilt and zoom the cameras it sees (schema v14).
    public var ptz: Bool
    /// A viewer may talk through the cameras it sees (schema v15).
    public var talk: Bool
    public var created90k: Int64
    public var passwordChanged90k: Int64

    enum CodingKeys: String, CodingKey {
        case id, name
        case passwordHash = "password_hash"
        case role, cameras, ptz, talk, created90k
        case passwordChanged90k = "password_changed90k"
    }

    public init(
        id: Int64? = nil, name: String, passwordHash: String, role: String, cameras: String? = nil,
        ptz: Bool = false, talk: Bool = false, created90k: Int64
    ) {
        self.id = id
        self.name = name
        self.passwordHash = passwordHash
        self.role = role
        self.cameras = cameras
        self.ptz = ptz
        self.talk = talk
        self.created90k = created90k
        self.passwordChanged90k = created90k
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}
