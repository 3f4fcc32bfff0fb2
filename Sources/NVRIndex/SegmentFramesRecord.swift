import Foundation
import GRDB

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
        case segmentID = "segment_id"
        case videoIndex = "video_index"
        case audioIndex = "audio_index"
        case fragmentIndex = "fragment_index"
        case audioStart90k = "audio_start90k"
    }

    public init(segmentID: Int64, videoIndex: Data, audioIndex: Data?, fragmentIndex: Data, audioStart90k: Int64?) {
        self.segmentID = segmentID
        self.videoIndex = videoIndex
        self.audioIndex = audioIndex
        self.fragmentIndex = fragmentIndex
        self.audioStart90k = audioStart90k
    }
}
