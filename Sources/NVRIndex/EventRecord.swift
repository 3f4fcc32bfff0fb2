import Foundation
import GRDB
import NVRTime

/// One event of a camera: motion the NVR saw, or something the camera reported.
public struct EventRecord: Codable, Sendable, Equatable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "event"
    public enum Source: String, Codable, Sendable { case plugin, motion, detection }

    public var id: Int64?
    public var cameraID: Int64
    public var start90k: Int64
    /// nil while the event is in progress.
    public var end90k: Int64?
    /// motion, doorbell, person, … (plugins name their own).
    public var type: String
    public var source: Source
    public var score: Double?
    /// The frame that shows the event best (motion: the most changed frame).
    public var snapshot90k: Int64?
    public var preRoll90k: Int64
    public var postRoll90k: Int64
    /// Detection events: where the object was at the snapshot, [x, y, width, height], 0…1
    /// from the picture's top left (stored as JSON).
    public var box: [Double]?
    /// Detection events: the camera's zones the object stood in (stored as JSON).
    public var zones: [String]?

    enum CodingKeys: String, CodingKey {
        case id, type, source, score, start90k, end90k, snapshot90k, box, zones
        case cameraID = "camera_id"
        case preRoll90k = "pre_roll90k"
        case postRoll90k = "post_roll90k"
    }

    public init(
        id: Int64? = nil, cameraID: Int64, start90k: Int64, end90k: Int64? = nil, type: String, source: Source,
        score: Double? = nil, snapshot90k: Int64? = nil, preRoll90k: Int64, postRoll90k: Int64, box: [Double]? = nil,
        zones: [String]? = nil
    ) {
        self.box = box
        self.zones = zones
        self.id = id
        self.cameraID = cameraID
        self.start90k = start90k
        self.end90k = end90k
        self.type = type
        self.source = source
        self.score = score
        self.snapshot90k = snapshot90k
        self.preRoll90k = preRoll90k
        self.postRoll90k = postRoll90k
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}
