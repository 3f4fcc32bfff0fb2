import Foundation
import GRDB

/// A camera: its plugin and the plugin's JSON config.
public struct CameraRecord: Codable, Sendable, Equatable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "camera"
    public var id: Int64?
    public var name: String
    public var plugin: String
    public var config: String
    public var enabled: Bool
    public var created90k: Int64
    /// (v8) Set when the camera was removed but its recordings kept.
    public var removed90k: Int64?

    public init(id: Int64? = nil, name: String, plugin: String, config: String, enabled: Bool = true, created90k: Int64,
                removed90k: Int64? = nil) {
        self.id = id; self.name = name; self.plugin = plugin; self.config = config
        self.enabled = enabled; self.created90k = created90k; self.removed90k = removed90k
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

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
        case sampleRate = "sample_rate", channels
    }

    public init(id: Int64? = nil, codec: String, rfc6381: String, width: Int, height: Int, sampleRate: Int,
                channels: Int, timescale: Int, extradata: Data, box: Data) {
        self.id = id; self.codec = codec; self.rfc6381 = rfc6381; self.width = width; self.height = height
        self.sampleRate = sampleRate; self.channels = channels; self.timescale = timescale
        self.extradata = extradata; self.box = box
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

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

    public var end90k: Int64 { start90k + duration90k }

    enum CodingKeys: String, CodingKey {
        case id, path, bytes, frames, state, source, hasEvent = "has_event"
        case cameraID = "camera_id", runID = "run_id", runSeq = "run_seq", start90k, duration90k
        case keyFrames = "key_frames", videoEntryID = "video_entry_id", audioEntryID = "audio_entry_id"
    }

    public init(id: Int64? = nil, cameraID: Int64, runID: Int64, runSeq: Int, start90k: Int64, duration90k: Int64 = 0,
                path: String, bytes: Int64 = 0, frames: Int = 0, keyFrames: Int = 0, videoEntryID: Int64,
                audioEntryID: Int64?, state: State = .writing, source: String = "live") {
        self.id = id; self.cameraID = cameraID; self.runID = runID; self.runSeq = runSeq
        self.start90k = start90k; self.duration90k = duration90k; self.path = path; self.bytes = bytes
        self.frames = frames; self.keyFrames = keyFrames; self.videoEntryID = videoEntryID
        self.audioEntryID = audioEntryID; self.state = state; self.source = source
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// The compact per-frame index of a segment (see FrameIndex for the encoding).
public struct SegmentFramesRecord: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "segment_frames"
    public var segmentID: Int64
    public var videoIndex: Data
    public var audioIndex: Data?
    public var fragmentIndex: Data
    /// Where the audio track starts on the 90 kHz timeline, when there is audio.
    public var audioStart90k: Int64?

    enum CodingKeys: String, CodingKey {
        case segmentID = "segment_id", videoIndex = "video_index", audioIndex = "audio_index"
        case fragmentIndex = "fragment_index", audioStart90k = "audio_start90k"
    }

    public init(segmentID: Int64, videoIndex: Data, audioIndex: Data?, fragmentIndex: Data, audioStart90k: Int64?) {
        self.segmentID = segmentID; self.videoIndex = videoIndex; self.audioIndex = audioIndex
        self.fragmentIndex = fragmentIndex; self.audioStart90k = audioStart90k
    }
}

/// The part of a segment row a timeline needs.
public struct SegmentSpan: Sendable, Equatable {
    public var start90k: Int64
    public var duration90k: Int64
    public var bytes: Int64
    public var hasEvent: Bool
    /// "live" (recorded from the stream) or, later, "card" (backfilled from the camera's card).
    public var source: String
    public var end90k: Int64 { start90k + duration90k }
    public init(start90k: Int64, duration90k: Int64, bytes: Int64, hasEvent: Bool, source: String) {
        self.start90k = start90k; self.duration90k = duration90k; self.bytes = bytes; self.hasEvent = hasEvent; self.source = source
    }
    public init(_ s: SegmentRecord) {
        self.init(start90k: s.start90k, duration90k: s.duration90k, bytes: s.bytes, hasEvent: s.hasEvent, source: s.source)
    }
}
