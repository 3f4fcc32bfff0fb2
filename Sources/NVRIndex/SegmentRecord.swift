import Foundation
import GRDB

/// A segment file and what it holds.
public struct SegmentRecord: Codable, Sendable, Equatable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "segment"
    public enum State: String, Codable, Sendable { case writing, complete, deleting }

    public var id: Int64?
    public var cameraID: Int64
    public var runID: Int64
    public var runSeq: Int
    public var start90k: Int64
    public var duration90k: Int64
    /// Relative to the storage root.
    public var path: String
    public var bytes: Int64
    public var frames: Int
    public var keyFrames: Int
    public var videoEntryID: Int64
    public var audioEntryID: Int64?
    public var state: State
    public var source: String
    /// The segment covers an event: retention keeps it longer than continuous footage.
    public var hasEvent: Bool = false
    /// (v16) The node that recorded it, under its own storage root (design/scale-out.md); nil:
    /// this machine's (one NVR on its own).
    public var node: String?

    public var end90k: Int64 { start90k + duration90k }

    enum CodingKeys: String, CodingKey {
        case id, path, bytes, frames, state, source, node
        case hasEvent = "has_event"
        case cameraID = "camera_id"
        case runID = "run_id"
        case runSeq = "run_seq"
        case start90k, duration90k
        case keyFrames = "key_frames"
        case videoEntryID = "video_entry_id"
        case audioEntryID = "audio_entry_id"
    }

    public init(
        id: Int64? = nil, cameraID: Int64, runID: Int64, runSeq: Int, start90k: Int64, duration90k: Int64 = 0,
        path: String, bytes: Int64 = 0, frames: Int = 0, keyFrames: Int = 0, videoEntryID: Int64,
        audioEntryID: Int64?, state: State = .writing, source: String = "live"
    ) {
        self.id = id
        self.cameraID = cameraID
        self.runID = runID
        self.runSeq = runSeq
        self.start90k = start90k
        self.duration90k = duration90k
        self.path = path
        self.bytes = bytes
        self.frames = frames
        self.keyFrames = keyFrames
        self.videoEntryID = videoEntryID
        self.audioEntryID = audioEntryID
        self.state = state
        self.source = source
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}
