import Foundation
import NVRStorage

/// A camera's object detection settings (stored as JSON in camera_recording.detect). Detection
/// looks at what the motion detector found moving: it runs while motion detection does.
public struct DetectSettings: Codable, Sendable, Equatable {
    /// The labels to detect and make events of ("person", "car"…); empty: detection is off.
    public var labels: [String] = []
    /// The lowest score a detection counts at (0…1).
    public var minScore: Double = 0.6
    /// Pictures a second offered to the detector while there is motion.
    public var fps: Double = 5
    /// In events mode, the event types that make recordings (`--record-on person`): motion
    /// alone then stays in the pre-roll buffer, and a person's event keeps it. Empty: every
    /// event records.
    public var recordOn: [String] = []

    public init(labels: [String] = []) { self.labels = labels }

    public var enabled: Bool { !labels.isEmpty }

    enum CodingKeys: String, CodingKey {
        case labels
        case minScore = "min_score"
        case fps
        case recordOn = "record_on"
    }

    public init(from d: any Decoder) throws {
        let c = try d.container(keyedBy: CodingKeys.self)
        var s = DetectSettings()
        s.labels = try c.decodeIfPresent([String].self, forKey: .labels) ?? s.labels
        s.minScore = try c.decodeIfPresent(Double.self, forKey: .minScore) ?? s.minScore
        s.fps = try c.decodeIfPresent(Double.self, forKey: .fps) ?? s.fps
        s.recordOn = try c.decodeIfPresent([String].self, forKey: .recordOn) ?? s.recordOn
        self = s
    }

    public func validate() throws {
        guard labels.count <= 100, recordOn.count <= 100,
            (labels + recordOn).allSatisfy({
                !$0.isEmpty && $0.count <= 40 && $0.allSatisfy { $0.isLetter || $0.isNumber || " _-".contains($0) }
            })
        else { throw ConfigError("detect labels are names like person or car, separated by commas") }
        guard minScore.isFinite, minScore > 0, minScore < 1 else {
            throw ConfigError("detect min score must be between 0 and 1")
        }
        guard fps.isFinite, fps > 0, fps <= 30 else { throw ConfigError("detect fps must be above 0 and at most 30") }
    }

    /// Parses "person,car" (or "off" / "" for none).
    public static func parseLabels(_ text: String) throws -> [String] {
        let t = text.trimmingCharacters(in: .whitespaces)
        if t.isEmpty || t == "off" { return [] }
        var seen = Set<String>()
        let labels = t.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter {
            seen.insert($0).inserted
        }
        var probe = DetectSettings(labels: labels)
        probe.fps = 5
        try probe.validate()
        return labels
    }
}
