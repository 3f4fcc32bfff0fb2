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
    /// Named areas of the picture (polygons of normalised points): an object is in a zone when
    /// the middle of its box's bottom edge is inside.
    public var zones: [Zone] = []
    /// Labels whose objects make events only in these zones (label → zone names): a person on
    /// the pavement is tracked but is no event; in the driveway it is.
    public var requiredZones: [String: [String]] = [:]

    /// The labels whose events are review alerts (the rest, plain motion included, are
    /// detections); an event of a camera's plugin (doorbell) counts by its type.
    public var alertLabels: [String] = ["person"]
    /// Non-empty: an event is an alert only when its object stood in one of these zones.
    public var alertZones: [String] = []

    public struct Zone: Codable, Sendable, Equatable {
        public var name: String
        public var points: [[Double]]
        public init(name: String, points: [[Double]]) {
            self.name = name
            self.points = points
        }

        /// Whether a normalised point is inside (even-odd rule).
        public func contains(x: Double, y: Double) -> Bool {
            points.count >= 3 && points.allSatisfy { $0.count == 2 } && MotionDetector.inside(x, y, points)
        }
    }

    public init(labels: [String] = []) { self.labels = labels }

    public var enabled: Bool { !labels.isEmpty }

    enum CodingKeys: String, CodingKey {
        case labels
        case minScore = "min_score"
        case fps
        case recordOn = "record_on"
        case zones
        case requiredZones = "required_zones"
        case alertLabels = "alert_labels"
        case alertZones = "alert_zones"
    }

    public init(from d: any Decoder) throws {
        let c = try d.container(keyedBy: CodingKeys.self)
        var s = DetectSettings()
        s.labels = try c.decodeIfPresent([String].self, forKey: .labels) ?? s.labels
        s.minScore = try c.decodeIfPresent(Double.self, forKey: .minScore) ?? s.minScore
        s.fps = try c.decodeIfPresent(Double.self, forKey: .fps) ?? s.fps
        s.recordOn = try c.decodeIfPresent([String].self, forKey: .recordOn) ?? s.recordOn
        s.zones = try c.decodeIfPresent([Zone].self, forKey: .zones) ?? s.zones
        s.requiredZones = try c.decodeIfPresent([String: [String]].self, forKey: .requiredZones) ?? s.requiredZones
        s.alertLabels = try c.decodeIfPresent([String].self, forKey: .alertLabels) ?? s.alertLabels
        s.alertZones = try c.decodeIfPresent([String].self, forKey: .alertZones) ?? s.alertZones
        self = s
    }

    public func validate() throws {
        guard labels.count <= 100, recordOn.count <= 100,
            (labels + recordOn).allSatisfy({
                !$0.isEmpty && $0.count <= 40 && $0.allSatisfy { $0.isLetter || $0.isNumber || " _-".contains($0) }
            })
        else { throw ConfigError("detect labels are names like person or car, separated by commas") }
        let names = zones.map(\.name)
        guard zones.count <= 50, Set(names).count == names.count,
            names.allSatisfy({ Self.isName($0) })
        else { throw ConfigError("zone names are unique words like driveway or front-door (at most 50 zones)") }
        for z in zones {
            guard z.points.count >= 3, z.points.count <= 100,
                z.points.allSatisfy({ $0.count == 2 && $0.allSatisfy { $0.isFinite && (0...1).contains($0) } })
            else { throw ConfigError("zone \(z.name) is a polygon of at least 3 points x,y between 0 and 1") }
        }
        for (label, required) in requiredZones {
            guard Self.isName(label), !required.isEmpty else {
                throw ConfigError("required zones are given as label=zone[,zone…]")
            }
            for z in required where !names.contains(z) {
                throw ConfigError("\(label) requires zone \(z), which the camera does not have")
            }
        }
        guard alertLabels.count <= 100, alertLabels.allSatisfy(Self.isName) else {
            throw ConfigError("alert labels are names like person or doorbell, separated by commas")
        }
        for z in alertZones where !names.contains(z) {
            throw ConfigError("alerts need zone \(z), which the camera does not have")
        }
        guard minScore.isFinite, minScore > 0, minScore < 1 else {
            throw ConfigError("detect min score must be between 0 and 1")
        }
        guard fps.isFinite, fps > 0, fps <= 30 else { throw ConfigError("detect fps must be above 0 and at most 30") }
    }

    static func isName(_ s: String) -> Bool {
        !s.isEmpty && s.count <= 40 && s.allSatisfy { $0.isLetter || $0.isNumber || "_-".contains($0) }
    }

    /// Whether an event is a review alert: its type is an alert label, and (with alert zones)
    /// its object stood in one of them.
    public func isAlert(type: String, zones: [String]?) -> Bool {
        guard alertLabels.contains(type) else { return false }
        return alertZones.isEmpty || (zones ?? []).contains(where: alertZones.contains)
    }

    /// The zones a box stands in (its bottom edge's middle).
    public func zones(of box: [Double]) -> [String] {
        guard box.count == 4 else { return [] }
        let (x, y) = (box[0] + box[2] / 2, box[1] + box[3])
        return zones.filter { $0.contains(x: x, y: min(y, 1 - 1e-9)) }.map(\.name)
    }

    /// Parses a zone written "NAME=x,y x,y x,y …".
    public static func parseZone(_ text: String) throws -> Zone {
        guard let eq = text.firstIndex(of: "=") else {
            throw ConfigError("a zone is NAME=x,y x,y x,y … (normalised points), not '\(text.prefix(60))'")
        }
        let name = String(text[..<eq]).trimmingCharacters(in: .whitespaces)
        guard isName(name) else { throw ConfigError("zone name '\(name.prefix(40))' should be a word like driveway") }
        let points = try MotionSettings.parsePoints(String(text[text.index(after: eq)...]), what: "zone")
        var probe = DetectSettings()
        probe.zones = [Zone(name: name, points: points)]
        try probe.validate()
        return probe.zones[0]
    }

    /// Parses "person=driveway,garden".
    public static func parseRequirement(_ text: String) throws -> (label: String, zones: [String]) {
        let parts = text.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count == 2, isName(parts[0].lowercased()) else {
            throw ConfigError("required zones are given as label=zone[,zone…], not '\(text.prefix(60))'")
        }
        return (parts[0].lowercased(), parts[1].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
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
