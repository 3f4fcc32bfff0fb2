import Foundation
import NVRIndex
import NVRStorage

/// A change to a camera's recording settings, as `nvr camera set` and the API express it:
/// nil fields stay as they are. `apply` checks everything (mode, schedule and zone, roll
/// lengths, motion values and masks) and returns the row to save, or a ConfigError that says
/// what is wrong.
public struct RecordingSettingsChange: Sendable, Codable, Equatable {
    public var mode: String?
    /// "" removes the schedule.
    public var schedule: String?
    /// "" goes back to the server's zone.
    public var tz: String?
    public var preRollSeconds: Double?
    public var postRollSeconds: Double?
    public var motion: String?
    public var motionSensitivity: Int?
    public var motionMinArea: Double?
    public var motionFrames: String?
    public var motionFps: Double?
    public var motionQuietSeconds: Double?
    /// Replaces every mask (each "x,y x,y x,y …"); [] removes them.
    public var motionMasks: [String]?
    /// Masks added to those there are (the CLI's repeatable --motion-mask).
    public var addMotionMasks: [String]?
    /// Labels to detect, "person,car"; "off" or "" turns detection off.
    public var detect: String?
    public var detectMinScore: Double?
    /// In events mode, the event types that record ("person,car"); "all" (or "") for every event.
    public var recordOn: String?
    /// Replaces every zone (each "NAME=x,y x,y x,y …"); [] removes them.
    public var zones: [String]?
    /// Zones added (or replaced, by name) to those there are (the CLI's repeatable --zone).
    public var addZones: [String]?
    /// Zones removed by name (and from every requirement).
    public var removeZones: [String]?
    /// Replaces every requirement (each "label=zone[,zone…]"); [] removes them.
    public var requiredZones: [String]?
    /// Requirements added (or replaced, by label); "label=" removes the label's.
    public var addRequiredZones: [String]?
    /// The labels whose events are review alerts ("person,doorbell"); "" for none.
    public var alertLabels: String?
    /// Alerts only in these zones ("driveway,door"); "" for anywhere.
    public var alertZones: String?

    public init() {}

    public func apply(to current: CameraRecordingRecord) throws -> CameraRecordingRecord {
        var r = current
        var m = try RecordingSettings(r).motion
        if let mode {
            guard RecordingMode(rawValue: mode) != nil else {
                throw ConfigError("mode must be continuous, events or off, not '\(mode.prefix(40))'")
            }
            r.mode = mode
        }
        if let schedule { r.schedule = schedule.trimmingCharacters(in: .whitespaces).isEmpty ? nil : schedule }
        if let tz { r.tz = tz.isEmpty ? nil : tz }
        if let preRollSeconds {
            guard preRollSeconds.isFinite, (0...300).contains(preRollSeconds) else {
                throw ConfigError("pre-roll must be 0…300 seconds")
            }
            r.preRoll90k = Int64(preRollSeconds * 90_000)
        }
        if let postRollSeconds {
            guard postRollSeconds.isFinite, (0...3600).contains(postRollSeconds) else {
                throw ConfigError("post-roll must be 0…3600 seconds")
            }
            r.postRoll90k = Int64(postRollSeconds * 90_000)
        }
        if let motion {
            guard let e = MotionSettings.Enabled(rawValue: motion) else {
                throw ConfigError("motion must be auto, on or off")
            }
            m.enabled = e
        }
        if let motionSensitivity { m.sensitivity = motionSensitivity }
        if let motionMinArea { m.minArea = motionMinArea }
        if let motionFrames {
            guard let f = MotionSettings.Frames(rawValue: motionFrames) else {
                throw ConfigError("motion frames must be auto, keyframes or all")
            }
            m.frames = f
        }
        if let motionFps { m.fps = motionFps }
        if let motionQuietSeconds { m.quietSeconds = motionQuietSeconds }
        if let motionMasks { m.masks = try motionMasks.map(MotionSettings.parseMask) }
        for text in addMotionMasks ?? [] { m.masks.append(try MotionSettings.parseMask(text)) }
        try m.validate()
        r.motion = String(decoding: try JSONEncoder().encode(m), as: UTF8.self)
        var d = try RecordingSettings(r).detect
        if let detect { d.labels = try DetectSettings.parseLabels(detect) }
        if let detectMinScore { d.minScore = detectMinScore }
        if let recordOn { d.recordOn = recordOn == "all" ? [] : try DetectSettings.parseLabels(recordOn) }
        if let zones { d.zones = try zones.map(DetectSettings.parseZone) }
        for text in addZones ?? [] {
            let z = try DetectSettings.parseZone(text)
            d.zones.removeAll { $0.name == z.name }
            d.zones.append(z)
        }
        for name in removeZones ?? [] {
            guard d.zones.contains(where: { $0.name == name }) else {
                throw ConfigError("the camera has no zone \(name.prefix(40))")
            }
            d.zones.removeAll { $0.name == name }
            for (label, required) in d.requiredZones {
                let left = required.filter { $0 != name }
                d.requiredZones[label] = left.isEmpty ? nil : left
            }
        }
        if let requiredZones {
            d.requiredZones = [:]
            for text in requiredZones {
                let r = try DetectSettings.parseRequirement(text)
                if !r.zones.isEmpty { d.requiredZones[r.label] = r.zones }
            }
        }
        for text in addRequiredZones ?? [] {
            let r = try DetectSettings.parseRequirement(text)
            d.requiredZones[r.label] = r.zones.isEmpty ? nil : r.zones
        }
        if let alertLabels { d.alertLabels = try DetectSettings.parseLabels(alertLabels) }
        if let alertZones {
            d.alertZones = alertZones.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        d.alertZones.removeAll { name in removeZones?.contains(name) ?? false }
        try d.validate()
        r.detect = String(decoding: try JSONEncoder().encode(d), as: UTF8.self)
        _ = try RecordingSettings(r)  // the schedule and its zone parse
        return r
    }
}
