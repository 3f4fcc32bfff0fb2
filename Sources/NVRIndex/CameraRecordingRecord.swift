import Foundation
import GRDB
import NVRTime

/// How a camera records (`nvr camera set`); a camera without a row uses the defaults.
public struct CameraRecordingRecord: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "camera_recording"
    public var cameraID: Int64
    /// continuous, events or off: the mode outside the schedule's rules.
    public var mode: String
    /// Weekly schedule (see RecordingSchedule); nil = always `mode`.
    public var schedule: String?
    /// IANA zone the schedule's times are in; nil = the server's.
    public var tz: String?
    public var preRoll90k: Int64
    public var postRoll90k: Int64
    /// Motion detector settings as JSON (see MotionSettings).
    public var motion: String
    /// Object detection settings as JSON (see DetectSettings).
    public var detect: String

    enum CodingKeys: String, CodingKey {
        case mode, schedule, tz, motion, detect
        case cameraID = "camera_id"
        case preRoll90k = "pre_roll90k"
        case postRoll90k = "post_roll90k"
    }

    public init(
        cameraID: Int64, mode: String = "continuous", schedule: String? = nil, tz: String? = nil,
        preRoll90k: Int64 = 5 * 90_000, postRoll90k: Int64 = 10 * 90_000, motion: String = "{}",
        detect: String = "{}"
    ) {
        self.detect = detect
        self.cameraID = cameraID
        self.mode = mode
        self.schedule = schedule
        self.tz = tz
        self.preRoll90k = preRoll90k
        self.postRoll90k = postRoll90k
        self.motion = motion
    }
}
