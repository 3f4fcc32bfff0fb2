import Foundation

/// One event message from a camera: its topic (e.g. `tns1:RuleEngine/CellMotionDetector/Motion`),
/// whether it is the state at subscription time (`Initialized`) or a change, and its Source
/// and Data items (`IsMotion` = `true`).
public struct ONVIFNotification: Sendable, Equatable {
    public var topic: String
    /// "Initialized", "Changed", "Deleted", or nil (a camera that does not say).
    public var operation: String?
    public var utcTime: String?
    public var source: [String: String]
    public var data: [String: String]

    public init(
        topic: String, operation: String? = nil, utcTime: String? = nil, source: [String: String] = [:],
        data: [String: String] = [:]
    ) {
        self.topic = topic
        self.operation = operation
        self.utcTime = utcTime
        self.source = source
        self.data = data
    }

    /// From a wsnt:NotificationMessage element.
    public init(_ n: XMLNode) {
        topic = n.child("Topic")?.value ?? ""
        // wsnt:Message wraps tt:Message (some cameras put the tt:Message's parts directly in).
        let outer = n.child("Message")
        let m = outer?.child("Message") ?? outer ?? XMLNode(name: "")
        operation = m.attributes["PropertyOperation"]
        utcTime = m.attributes["UtcTime"]
        func items(_ part: String) -> [String: String] {
            var out: [String: String] = [:]
            for item in m.child(part)?.all("SimpleItem") ?? [] {
                if let k = item.attributes["Name"], let v = item.attributes["Value"] { out[k] = v }
            }
            return out
        }
        source = items("Source")
        data = items("Data")
    }

    /// What the NVR makes of it: an event type and whether it is now on, or nil for topics
    /// it does not record on. Motion (`RuleEngine/CellMotionDetector`, `VideoSource/MotionAlarm`),
    /// tamper (`…/Tamper…`, `VideoSource/GlobalSceneChange`), and analytics that name a person
    /// or a vehicle.
    public var nvrEvent: (type: String, active: Bool)? {
        let t = topic.lowercased()
        let type: String
        if t.contains("tamper") || t.contains("globalscenechange") {
            type = "tamper"
        } else if t.contains("people") || t.contains("person") || t.contains("human") || t.contains("face") {
            type = "person"
        } else if t.contains("vehicle") || t.contains("licenseplate") {
            type = "vehicle"
        } else if t.contains("motion") {
            type = "motion"
        } else if t.contains("objectdetection") || t.contains("linedetector") || t.contains("fielddetector") {
            let kind = (data["ClassTypes"] ?? data["ObjectType"] ?? data["Type"] ?? "").lowercased()
            type =
                kind.contains("human") || kind.contains("person")
                ? "person" : kind.contains("vehicle") ? "vehicle" : "object"
        } else {
            return nil
        }
        // The item that says on/off: the well-known names first, then any boolean.
        let known = [
            "IsMotion", "State", "IsTamper", "IsGlobalSceneChange", "IsPeople", "IsHuman", "IsPerson", "IsVehicle",
            "IsInside", "IsDetected", "Active",
        ]
        let raw = known.lazy.compactMap { data[$0] }.first ?? data.values.first { Self.boolean($0) != nil }
        guard let raw, let active = Self.boolean(raw) else { return nil }
        return (type, active)
    }

    static func boolean(_ s: String) -> Bool? {
        switch s.trimmingCharacters(in: .whitespaces).lowercased() {
        case "true", "1", "on", "active": return true
        case "false", "0", "off", "inactive": return false
        default: return nil
        }
    }
}
