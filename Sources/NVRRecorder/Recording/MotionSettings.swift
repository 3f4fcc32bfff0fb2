import Foundation
import NVRIndex
import NVRStorage

/// Settings of the built-in motion detector (stored as JSON in camera_recording.motion).
/// Defaults and their reasons: design/motion.md.
public struct MotionSettings: Codable, Sendable, Equatable {
    public enum Enabled: String, Codable, Sendable { case auto, on, off }
    public enum Frames: String, Codable, Sendable { case auto, keyframes, all }
    /// auto: on when the camera can record in `events` mode (its mode or a schedule rule).
    public var enabled: Enabled = .auto
    /// 1…100: how small a change in brightness counts (100 = the smallest).
    public var sensitivity: Int = 50
    /// Percent of the (unmasked) picture that must change for motion.
    public var minArea: Double = 0.3
    /// keyframes: decode only key frames (cheapest; timing to half a GOP); all: decode every
    /// frame and look `fps` times a second; auto: all for pictures up to 0.5 MP (sub-streams),
    /// key frames above.
    public var frames: Frames = .auto
    public var fps: Double = 5
    /// Seconds without motion that end a motion event.
    public var quietSeconds: Double = 2
    /// Areas to ignore: polygons of normalized (x, y) points, 0…1 from the top left.
    public var masks: [[[Double]]] = []

    public init() {}

    enum CodingKeys: String, CodingKey {
        case enabled, sensitivity
        case minArea = "min_area"
        case frames, fps
        case quietSeconds = "quiet_seconds"
        case masks
    }

    public init(from d: any Decoder) throws {
        let c = try d.container(keyedBy: CodingKeys.self)
        var s = MotionSettings()
        s.enabled = try c.decodeIfPresent(Enabled.self, forKey: .enabled) ?? s.enabled
        s.sensitivity = try c.decodeIfPresent(Int.self, forKey: .sensitivity) ?? s.sensitivity
        s.minArea = try c.decodeIfPresent(Double.self, forKey: .minArea) ?? s.minArea
        s.frames = try c.decodeIfPresent(Frames.self, forKey: .frames) ?? s.frames
        s.fps = try c.decodeIfPresent(Double.self, forKey: .fps) ?? s.fps
        s.quietSeconds = try c.decodeIfPresent(Double.self, forKey: .quietSeconds) ?? s.quietSeconds
        s.masks = try c.decodeIfPresent([[[Double]]].self, forKey: .masks) ?? s.masks
        self = s
    }

    /// Throws a message a person can act on when a value is out of range.
    public func validate() throws {
        guard (1...100).contains(sensitivity) else { throw ConfigError("motion sensitivity must be 1…100") }
        guard minArea > 0 && minArea <= 100 else {
            throw ConfigError("motion min area must be a percentage above 0 and at most 100")
        }
        guard fps > 0 && fps <= 30 else { throw ConfigError("motion fps must be above 0 and at most 30") }
        guard quietSeconds >= 0.5 && quietSeconds <= 600 else {
            throw ConfigError("motion quiet seconds must be 0.5…600")
        }
        for m in masks {
            guard m.count >= 3, m.allSatisfy({ $0.count == 2 && $0.allSatisfy { (0...1).contains($0) } }) else {
                throw ConfigError("a motion mask is a polygon of at least 3 points x,y between 0 and 1")
            }
        }
    }

    /// Parses points written as "x,y x,y x,y …" (normalized coordinates; a mask's or a zone's,
    /// `what` says which in the error).
    static func parsePoints(_ text: String, what: String) throws -> [[Double]] {
        try text.split(whereSeparator: \.isWhitespace).map { p -> [Double] in
            let xy = p.split(separator: ",").compactMap { Double($0) }
            guard xy.count == 2 else { throw ConfigError("\(what) point '\(p.prefix(40))' should be x,y (each 0…1)") }
            return xy
        }
    }

    /// Parses a mask polygon written as "x,y x,y x,y …" (normalized coordinates).
    public static func parseMask(_ text: String) throws -> [[Double]] {
        let mask = try parsePoints(text, what: "mask")
        var probe = MotionSettings()
        probe.masks = [mask]
        try probe.validate()
        return mask
    }
}
