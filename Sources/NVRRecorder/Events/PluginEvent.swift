import Foundation
import NVRIndex
import NVRStorage
import NVRTime

/// An event a plugin reported through the ABI's `event` callback, as JSON:
/// `{"type":"motion","phase":"start"|"stop"|"pulse","score":0.7,"time90k":…,"quiet_seconds":10}`.
/// `pulse` is an instantaneous event: it lasts until `quiet_seconds` (default 10) pass
/// without another pulse of its type. `time90k` defaults to now; a time more than ten
/// minutes off the NVR's clock is taken as a camera clock error and replaced by now.
public struct PluginEvent: Sendable, Equatable {
    public enum Phase: String, Sendable { case start, stop, pulse }
    public var type: String
    public var phase: Phase
    public var score: Double?
    public var time90k: Int64
    public var quiet90k: Int64

    public static let defaultQuiet90k: Int64 = 10 * 90_000

    public init(json: String, now: Int64 = Time90k.now()) throws {
        guard let o = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else {
            throw ConfigError("event is not a JSON object: \(json.prefix(120))")
        }
        guard let type = o["type"] as? String, !type.isEmpty, type.count <= 64,
            type.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == "." })
        else {
            throw ConfigError("event has no valid \"type\" (letters, digits, - _ .): \(json.prefix(120))")
        }
        guard let p = o["phase"] as? String, let phase = Phase(rawValue: p) else {
            throw ConfigError("event \"phase\" must be start, stop or pulse: \(json.prefix(120))")
        }
        self.type = type
        self.phase = phase
        score = (o["score"] as? NSNumber)?.doubleValue
        // A time more than 10 minutes from the NVR's clock (or not a number that fits) is taken
        // as "now": plugins' clocks are outside input.
        var t = (o["time90k"] as? NSNumber)?.int64Value ?? now
        if Time90k.subtract(t, now).magnitude > 600 * 90_000 { t = now }
        time90k = t
        let quiet = (o["quiet_seconds"] as? NSNumber)?.doubleValue
        quiet90k = quiet.flatMap { $0.isFinite ? Int64(min(max($0, 0.1), 3600) * 90_000) : nil } ?? Self.defaultQuiet90k
    }
}

extension PluginEvent {
    /// What nvr_event tells a plugin about one of the NVR's events (nvr_plugin.h).
    public static func notification(_ e: EventRecord, started: Bool) -> String {
        var o: [String: Any] = [
            "type": e.type, "source": e.source.rawValue, "phase": started ? "start" : "end",
            "time90k": started ? e.start90k : (e.end90k ?? Time90k.now()),
        ]
        if let id = e.id { o["id"] = id }
        let data = (try? JSONSerialization.data(withJSONObject: o, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
