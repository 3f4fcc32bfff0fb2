import Foundation
import GRDB

/// Codec configuration of a track.
public struct SampleEntryRecord: Codable, Sendable, Equatable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "sample_entry"
    public var id: Int64?
    public var codec: String
    public var rfc6381: String
    public var width: Int
    public var height: Int
    public var sampleRate: Int
    public var channels: Int
    public var timescale: Int
    public var extradata: Data
    public var box: Data

    enum CodingKeys: String, CodingKey {
        case id, codec, rfc6381, width, height, timescale, extradata, box
        case sampleRate = "sample_rate"
        case channels
    }

    public init(
        id: Int64? = nil, codec: String, rfc6381: String, width: Int, height: Int, sampleRate: Int,
        channels: Int, timescale: Int, extradata: Data, box: Data
    ) {
        self.id = id
        self.codec = codec
        self.rfc6381 = rfc6381
        self.width = width
        self.height = height
        self.sampleRate = sampleRate
        self.channels = channels
        self.timescale = timescale
        self.extradata = extradata
        self.box = box
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}
