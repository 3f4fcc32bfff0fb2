import Foundation
import NVRIndex
import NVRStorage

/// A camera's recording settings, decoded from its camera_recording row.
public struct RecordingSettings: Sendable, Equatable {
    public var mode: RecordingMode
    public var schedule: RecordingSchedule?
    public var preRoll90k: Int64
    public var postRoll90k: Int64
    public var motion: MotionSettings
    public var detect: DetectSettings

    public init(
        mode: RecordingMode = .continuous, schedule: RecordingSchedule? = nil, preRoll90k: Int64 = 5 * 90_000,
        postRoll90k: Int64 = 10 * 90_000, motion: MotionSettings = MotionSettings(),
        detect: DetectSettings = DetectSettings()
    ) {
        self.detect = detect
        self.mode = mode
        self.schedule = schedule
        self.preRoll90k = preRoll90k
        self.postRoll90k = postRoll90k
        self.motion = motion
    }

    public init(_ r: CameraRecordingRecord) throws {
        guard let mode = RecordingMode(rawValue: r.mode) else {
            throw ConfigError("unknown recording mode '\(r.mode)'")
        }
        let motion: MotionSettings
        do { motion = try JSONDecoder().decode(MotionSettings.self, from: Data(r.motion.utf8)) } catch {
            throw ConfigError("motion settings are not valid JSON: \(error)")
        }
        let detect: DetectSettings
        do { detect = try JSONDecoder().decode(DetectSettings.self, from: Data(r.detect.utf8)) } catch {
            throw ConfigError("detect settings are not valid JSON: \(error)")
        }
        // Checked as `camera set` checks them: a hand-edited index must not crash the recorder.
        try detect.validate()
        self.init(
            mode: mode, schedule: try r.schedule.map { try RecordingSchedule($0, tz: r.tz) },
            preRoll90k: r.preRoll90k, postRoll90k: r.postRoll90k, motion: motion, detect: detect)
    }

    public static func load(cameraID: Int64, index: any IndexStore) throws -> RecordingSettings {
        try RecordingSettings(try index.recordingSettings(cameraID: cameraID))
    }

    /// The mode in force at `t`.
    public func mode(at t: Int64) -> RecordingMode { schedule?.mode(at: t) ?? mode }

    /// Whether the motion detector runs (auto: when the camera can record in events mode, or
    /// detects objects, which it looks for where there is motion).
    public var motionEnabled: Bool {
        switch motion.enabled {
        case .on: true
        case .off: false
        case .auto:
            mode == .events || (schedule?.rules.contains { $0.mode == .events } ?? false) || detect.enabled
        }
    }
}
