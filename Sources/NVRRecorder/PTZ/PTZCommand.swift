import Foundation

/// One thing asked of a camera's pan, tilt and zoom, checked: what `POST
/// /api/cameras/{name}/ptz` and `<prefix>/<camera>/ptz` take. Speeds are -1…1 (the camera's
/// full speed either way), an absolute zoom 0…1; every move lasts at most `longestMove`.
public enum PTZCommand: Sendable, Equatable {
    case describe
    case move(pan: Double, tilt: Double, zoom: Double, seconds: Double)
    case stop
    case goTo(preset: String)
    case savePreset(name: String, replacing: String?)
    case zoom(Double)

    /// A move's length when none is given, and the longest one taken.
    public static let defaultMove = 1.0
    public static let longestMove = 10.0

    /// A request that cannot be sent, and why.
    public struct Invalid: Error, CustomStringConvertible, Sendable {
        public let description: String
        init(_ d: String) { description = d }
    }

    /// The JSON body: `{"action": "move", "pan": 0.5, "tilt": 0, "zoom": 0, "seconds": 1}`,
    /// `{"action": "stop"}`, `{"action": "preset", "preset": "1"}`, `{"action": "savePreset",
    /// "name": "Door", "preset": "1"?}`, `{"action": "zoom", "zoom": 0.5}`.
    public struct Body: Decodable, Sendable {
        public var action: String
        public var pan, tilt, zoom, seconds: Double?
        public var preset, name: String?
    }

    public init(_ b: Body) throws(Invalid) {
        switch b.action {
        case "move":
            let pan = try Self.speed(b.pan, "pan")
            let tilt = try Self.speed(b.tilt, "tilt")
            let zoom = try Self.speed(b.zoom, "zoom")
            guard pan != 0 || tilt != 0 || zoom != 0 else {
                throw Invalid("a move needs a pan, tilt or zoom speed other than 0")
            }
            let seconds = b.seconds ?? Self.defaultMove
            guard seconds >= 0.1 && seconds <= Self.longestMove else {
                throw Invalid("seconds must be from 0.1 to \(Int(Self.longestMove)) (a move always ends by itself)")
            }
            self = .move(pan: pan, tilt: tilt, zoom: zoom, seconds: seconds)
        case "stop":
            self = .stop
        case "preset":
            self = .goTo(preset: try Self.text(b.preset, "preset"))
        case "savePreset":
            let name = try Self.text(b.name, "name")
            var replacing: String?
            if let p = b.preset { replacing = try Self.text(p, "preset") }
            self = .savePreset(name: name, replacing: replacing)
        case "zoom":
            guard let z = b.zoom, z >= 0 && z <= 1 else { throw Invalid("zoom must be from 0 (widest) to 1") }
            self = .zoom(z)
        default:
            throw Invalid(
                "action must be move, stop, preset, savePreset or zoom, not '\(b.action.prefix(32))'")
        }
    }

    /// An MQTT payload: the JSON body, or a word for buttons and automations — `left`,
    /// `right`, `up`, `down`, `zoom_in`, `zoom_out` (a one-second move at half speed), `stop`,
    /// or `preset:TOKEN`.
    public init(mqtt payload: String) throws(Invalid) {
        let p = payload.trimmingCharacters(in: .whitespacesAndNewlines)
        if p.hasPrefix("{") {
            let body: Body
            do { body = try JSONDecoder().decode(Body.self, from: Data(p.utf8)) } catch {
                throw Invalid("the payload is not a PTZ request as JSON")
            }
            try self.init(body)
            return
        }
        let half = 0.5
        switch p.lowercased() {
        case "left": self = .move(pan: -half, tilt: 0, zoom: 0, seconds: Self.defaultMove)
        case "right": self = .move(pan: half, tilt: 0, zoom: 0, seconds: Self.defaultMove)
        case "up": self = .move(pan: 0, tilt: half, zoom: 0, seconds: Self.defaultMove)
        case "down": self = .move(pan: 0, tilt: -half, zoom: 0, seconds: Self.defaultMove)
        case "zoom_in": self = .move(pan: 0, tilt: 0, zoom: half, seconds: Self.defaultMove)
        case "zoom_out": self = .move(pan: 0, tilt: 0, zoom: -half, seconds: Self.defaultMove)
        case "stop": self = .stop
        default:
            guard p.lowercased().hasPrefix("preset:") else {
                throw Invalid(
                    "expected left, right, up, down, zoom_in, zoom_out, stop, preset:TOKEN or a JSON request")
            }
            self = .goTo(preset: try Self.text(String(p.dropFirst("preset:".count)), "preset"))
        }
    }

    /// The request as the plugin takes it (nvr_plugin.h, nvr_ptz_functions).
    var pluginRequest: String {
        struct Request: Encodable {
            var op: String
            var pan, tilt, zoom, seconds: Double?
            var preset, name: String?
        }
        var r: Request
        switch self {
        case .describe: r = Request(op: "describe")
        case .move(let pan, let tilt, let zoom, let seconds):
            r = Request(op: "move", pan: pan, tilt: tilt, zoom: zoom, seconds: seconds)
        case .stop: r = Request(op: "stop")
        case .goTo(let preset): r = Request(op: "goto", preset: preset)
        case .savePreset(let name, let replacing): r = Request(op: "set", preset: replacing, name: name)
        case .zoom(let z): r = Request(op: "zoom", zoom: z)
        }
        return (try? JSONEncoder().encode(r)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    private static func speed(_ v: Double?, _ name: String) throws(Invalid) -> Double {
        let s = v ?? 0
        guard s >= -1 && s <= 1 else { throw Invalid("\(name) must be from -1 to 1 (a speed), not \(s)") }
        return s
    }

    /// A preset token or name: 1 to 64 characters, no control characters.
    private static func text(_ v: String?, _ name: String) throws(Invalid) -> String {
        guard let v, !v.isEmpty, v.unicodeScalars.count <= 64,
            !v.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { throw Invalid("\(name) must be 1 to 64 characters") }
        return v
    }
}

extension String {
    /// At most `n` Unicode scalars: bounded in bytes too (a character may hold any number of
    /// combining marks, so a prefix of characters is not).
    func scalarPrefix(_ n: Int) -> String { String(String.UnicodeScalarView(unicodeScalars.prefix(n))) }
}
