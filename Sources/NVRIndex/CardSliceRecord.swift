import GRDB
import NVRTime

/// One video on a camera's memory card, on the NVR's clock.
public struct CardSliceRecord: Codable, Sendable, Equatable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "card_slice"
    public var id: Int64?
    public var cameraID: Int64
    /// The plugin's handle for reading the file (e.g. "100GOPRO/GH010001.MP4").
    public var fileID: String
    public var name: String
    public var start90k: Int64
    public var end90k: Int64
    public var bytes: Int64
    public var seen90k: Int64
    /// False for files listed but kept off the timeline and out of backfill (a 360 camera's
    /// second lens: the same moments as the first).
    public var onTimeline: Bool
    public var source: CardSource
    enum CodingKeys: String, CodingKey {
        case id
        case cameraID = "camera_id"
        case fileID = "file_id"
        case name, start90k, end90k, bytes, seen90k
        case onTimeline = "on_timeline"
        case source
    }
    public init(
        cameraID: Int64, fileID: String, name: String, start90k: Int64, end90k: Int64, bytes: Int64, seen90k: Int64,
        onTimeline: Bool = true, source: CardSource = .card
    ) {
        self.cameraID = cameraID
        self.fileID = fileID
        self.name = name
        self.start90k = start90k
        self.end90k = end90k
        self.bytes = bytes
        self.seen90k = seen90k
        self.onTimeline = onTimeline
        self.source = source
    }
    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}
