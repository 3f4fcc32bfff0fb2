import Foundation
import GRDB

/// A camera's retention limits; nil = no limit of that kind.
public struct CameraRetention: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "camera_retention"
    public var cameraID: Int64
    public var continuousDays: Double?
    public var eventDays: Double?
    public var maxBytes: Int64?

    enum CodingKeys: String, CodingKey {
        case cameraID = "camera_id"
        case continuousDays = "continuous_days"
        case eventDays = "event_days"
        case maxBytes = "max_bytes"
    }

    public init(cameraID: Int64, continuousDays: Double? = nil, eventDays: Double? = nil, maxBytes: Int64? = nil) {
        self.cameraID = cameraID
        self.continuousDays = continuousDays
        self.eventDays = eventDays
        self.maxBytes = maxBytes
    }
}
