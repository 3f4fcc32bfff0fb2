import Foundation
import GRDB

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
        case id
        case cameraID = "camera_id"
        case start90k, end90k
        case eventID = "event_id"
        case note, created90k
        case createdBy = "created_by"
    }

    public init(
        cameraID: Int64, start90k: Int64, end90k: Int64, eventID: Int64?, note: String, created90k: Int64,
        createdBy: String
    ) {
        self.cameraID = cameraID
        self.start90k = start90k
        self.end90k = end90k
        self.eventID = eventID
        self.note = note
        self.created90k = created90k
        self.createdBy = createdBy
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}
