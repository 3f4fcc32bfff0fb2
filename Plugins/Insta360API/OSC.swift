import Foundation

/// Decoders for the Open Spherical Camera (OSC, API level 2) answers an Insta360 camera gives
/// (PROTOCOLS.md). A separate module so tests can check them without loading the plugin.
public enum OSC {
    /// Headers every OSC request carries.
    public static let requestHeaders = [
        "Content-Type": "application/json;charset=utf-8",
        "Accept": "application/json",
        "X-XSRF-Protected": "1",
    ]

    /// Parses a JSON object, with a clear error naming what was asked.
    public static func object(_ data: Data, from what: String) throws -> [String: Any] {
        guard let obj = try? JSONSerialization.jsonObject(with: data), let dict = obj as? [String: Any] else {
            let preview = String(decoding: data.prefix(80), as: UTF8.self)
            throw OSCError(code: "malformedAnswer", message: "malformed JSON from \(what): '\(preview)'")
        }
        return dict
    }

    public static func int(_ v: Any?) -> Int64? {
        switch v {
        case let n as NSNumber: return n.int64Value
        case let s as String: return Int64(s.trimmingCharacters(in: .whitespaces))
        default: return nil
        }
    }

    public static func double(_ v: Any?) -> Double? {
        switch v {
        case let n as NSNumber: return n.doubleValue
        case let s as String: return Double(s.trimmingCharacters(in: .whitespaces))
        default: return nil
        }
    }

    /// "YYYY:MM:DD HH:MM:SS+HH:MM" (OSC's dateTimeZone) → seconds since the epoch (UTC).
    /// Without a zone suffix the time is read as UTC and `hadZone` is false.
    public static func parseDateTimeZone(_ s: String) -> (epoch: Double, hadZone: Bool)? {
        let t = s.trimmingCharacters(in: .whitespaces)
        let scalars = Array(t.unicodeScalars)
        guard scalars.count >= 19 else { return nil }
        func num(_ a: Int, _ n: Int) -> Int? {
            var v = 0
            for i in a..<(a + n) {
                guard i < scalars.count, let d = Int(String(scalars[i])), scalars[i].properties.numericType != nil
                else { return nil }
                v = v * 10 + d
            }
            return v
        }
        guard let y = num(0, 4), let mo = num(5, 2), let d = num(8, 2), let h = num(11, 2), let mi = num(14, 2),
            let se = num(17, 2),
            (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, se < 61
        else { return nil }
        var c = DateComponents()
        c.year = y
        c.month = mo
        c.day = d
        c.hour = h
        c.minute = mi
        c.second = se
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = TimeZone(identifier: "UTC")!
        guard let local = cal.date(from: c) else { return nil }
        var rest = String(String.UnicodeScalarView(scalars[19...]))
        // Fractions of a second are not in the format, but tolerate them.
        if rest.hasPrefix(".") { rest = String(rest.drop(while: { $0 == "." || $0.isNumber })) }
        if rest.isEmpty { return (local.timeIntervalSince1970, false) }
        if rest == "Z" { return (local.timeIntervalSince1970, true) }
        let sign: Double = rest.hasPrefix("-") ? -1 : 1
        let digits = rest.dropFirst().filter(\.isNumber)
        guard rest.hasPrefix("+") || rest.hasPrefix("-"), digits.count == 4 || digits.count == 2,
            let zh = Int(digits.prefix(2)), let zm = Int(digits.count == 4 ? String(digits.suffix(2)) : "0"), zh <= 14,
            zm < 60
        else { return nil }
        return (local.timeIntervalSince1970 - sign * Double(zh * 3600 + zm * 60), true)
    }
}

extension OSC {
    /// The zone of an OSC time ("…+08:00") in seconds east of UTC; nil without one.
    public static func zoneSeconds(of s: String) -> Int? {
        let t = s.trimmingCharacters(in: .whitespaces)
        guard let zoned = parseDateTimeZone(t), zoned.hadZone, let local = parseDateTimeZone(String(t.prefix(19)))
        else { return nil }
        return Int((local.epoch - zoned.epoch).rounded())
    }
}

/// An OSC error: the camera's code (invalidParameterName, disabledCommand, …) or a transport
/// failure, with a message a person can act on.
public struct OSCError: Error, CustomStringConvertible, Sendable, Equatable {
    public let code: String
    public let message: String
    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String {
        let hint: String? =
            switch code {
            case "disabledCommand": "the camera refuses this command in its current mode"
            case "invalidParameterName": "the camera does not know a parameter or option asked for"
            case "invalidParameterValue": "the camera rejects a value"
            case "missingParameter": "a required parameter is missing"
            case "unknownCommand": "this camera does not have the command"
            case "cameraInExclusiveUse": "another app controls the camera"
            case "unactivated": "the camera is not activated yet (activate it in the Insta360 app)"
            case "corruptedFile": "the file on the card is damaged"
            case "powerOffSequenceRunning": "the camera is switching off"
            case "serverError": "the camera had an internal error"
            default: nil
            }
        // Transport failures (unreachable, HTTP status, timeout) carry their whole story in the message.
        guard let hint else { return message.isEmpty ? code : message }
        return message.isEmpty ? "\(code): \(hint)" : "\(code): \(message) (\(hint))"
    }
}

/// The answer to `/osc/commands/execute` or `/osc/commands/status`.
public struct OSCCommandResult: @unchecked Sendable {
    // @unchecked Sendable: `results` holds JSONSerialization values, never mutated.
    public enum State: String, Sendable { case done, inProgress, error }
    public var name: String
    public var state: State
    public var id: String?
    public var results: [String: Any]
    public var completion: Double?
    public var error: OSCError?

    public init(json data: Data, command: String) throws {
        let o = try OSC.object(data, from: command)
        try self.init(object: o, command: command)
    }

    public init(object o: [String: Any], command: String) throws {
        name = o["name"] as? String ?? command
        guard let s = o["state"] as? String, let st = State(rawValue: s) else {
            throw OSCError(code: "malformedAnswer", message: "\(command): answer has no valid \"state\"")
        }
        state = st
        id = (o["id"] as? String) ?? OSC.int(o["id"]).map(String.init)
        results = o["results"] as? [String: Any] ?? [:]
        completion = OSC.double((o["progress"] as? [String: Any])?["completion"])
        if let e = o["error"] as? [String: Any] {
            error = OSCError(code: e["code"] as? String ?? "unknown", message: e["message"] as? String ?? "")
        } else if st == .error {
            error = OSCError(code: "unknown", message: "\(command) failed without an error code")
        }
        if st == .inProgress, id == nil {
            throw OSCError(code: "malformedAnswer", message: "\(command): inProgress without an id to poll")
        }
    }
}

/// `POST /osc/state`.
public struct OSCState: Sendable, Equatable {
    public enum Card: String, Sendable { case noCard, pass, noSpace, invalidFormat, writeProtect, otherError }
    public var fingerprint: String
    /// 0…1.
    public var batteryLevel: Double?
    public var card: Card?
    /// The raw `_cardState` when it is not one of the documented values.
    public var cardText: String?
    public var storageUri: String?

    public init(json data: Data) throws {
        let o = try OSC.object(data, from: "/osc/state")
        guard let fp = o["fingerprint"] as? String else {
            throw OSCError(code: "malformedAnswer", message: "/osc/state has no fingerprint")
        }
        fingerprint = fp
        let st = o["state"] as? [String: Any] ?? [:]
        batteryLevel = OSC.double(st["batteryLevel"]).map { min(max($0, 0), 1) }
        cardText = st["_cardState"] as? String
        card = cardText.flatMap(Card.init(rawValue:))
        storageUri = st["storageUri"] as? String
    }

    public var cardDescription: String? {
        guard let cardText else { return nil }
        return switch card {
        case .noCard: "no card"
        case .pass: "ok"
        case .noSpace: "full"
        case .invalidFormat: "needs formatting"
        case .writeProtect: "write-protected"
        case .otherError: "error"
        case nil: cardText
        }
    }
}

/// `camera.getOptions` results: the options an NVR shows.
public struct OSCOptions: Sendable, Equatable {
    public var remainingSpace: Int64?
    public var totalSpace: Int64?
    public var batteryCapacity: Int64?
    public var captureMode: String?
    /// The camera's clock as Insta360's reference gives it (`_dateTime`, "YYYY:MM:DD HH:MM:SS",
    /// no zone), when given.
    public var dateTime: String?
    /// The camera's clock with its zone (OSC's standard `dateTimeZone` option), when given.
    public var dateTimeZone: String?

    public static let standard = ["remainingSpace", "totalSpace", "captureMode"]
    public static let vendor = ["_batteryCapacity", "_dateTime"]
    /// What the clock is read from: the standard option first (it has the zone), then the vendor one.
    public static let clock = ["dateTimeZone", "_dateTime"]

    public init(results: [String: Any]) {
        let o = results["options"] as? [String: Any] ?? [:]
        remainingSpace = OSC.int(o["remainingSpace"])
        totalSpace = OSC.int(o["totalSpace"])
        batteryCapacity = OSC.int(o["_batteryCapacity"])
        captureMode = o["captureMode"] as? String
        dateTime = o["_dateTime"] as? String
        dateTimeZone = o["dateTimeZone"] as? String
    }

    /// The camera's clock in UTC seconds: `dateTimeZone`; else `_dateTime` when it carries a
    /// zone; else a zone-less `_dateTime` in `zoneFallback` (seconds east of UTC, e.g. the zone
    /// the card's files are stamped in).
    public func clockUTC(zoneFallback: Int? = nil) -> Double? {
        if let dateTimeZone, let p = OSC.parseDateTimeZone(dateTimeZone), p.hadZone { return p.epoch }
        guard let dateTime, let p = OSC.parseDateTimeZone(dateTime) else { return nil }
        if p.hadZone { return p.epoch }
        return zoneFallback.map { p.epoch - Double($0) }
    }

    /// The clock as far as these options alone tell it.
    public var clockUTC: Double? { clockUTC() }
}

/// One `camera.listFiles` entry.
public struct OSCFileEntry: Sendable, Equatable {
    public var name: String
    public var fileUrl: String
    public var localFileUrl: String?
    public var size: Int64
    public var width: Int?
    public var height: Int?
    /// As the camera wrote it: "YYYY:MM:DD HH:MM:SS+HH:MM", the END of capture for videos.
    public var dateTimeZone: String
    public var isProcessed: Bool?

    public init(object o: [String: Any]) throws {
        guard let name = o["name"] as? String, let url = o["fileUrl"] as? String, let dtz = o["dateTimeZone"] as? String
        else {
            throw OSCError(
                code: "malformedAnswer", message: "camera.listFiles entry lacks name, fileUrl or dateTimeZone")
        }
        self.name = name
        fileUrl = url
        localFileUrl = o["_localFileUrl"] as? String
        size = OSC.int(o["size"]) ?? 0
        width = OSC.int(o["width"]).map(Int.init)
        height = OSC.int(o["height"]).map(Int.init)
        dateTimeZone = dtz
        isProcessed = o["isProcessed"] as? Bool
    }

    /// The file's path on the camera's web server ("DCIM/Camera01/VID_….insv"), the card id.
    public var path: String {
        if let u = URLComponents(string: fileUrl), u.host != nil {
            return String(u.percentEncodedPath.drop(while: { $0 == "/" })).removingPercentEncoding ?? u.path
        }
        return String(fileUrl.drop(while: { $0 == "/" }))
    }
}

/// `camera.listFiles` results: one page.
public struct OSCFilePage: Sendable {
    public var entries: [OSCFileEntry]
    public var totalEntries: Int

    public init(results: [String: Any]) throws {
        guard let list = results["entries"] as? [Any] else {
            throw OSCError(code: "malformedAnswer", message: "camera.listFiles results have no entries")
        }
        entries = try list.map { item in
            guard let o = item as? [String: Any] else {
                throw OSCError(code: "malformedAnswer", message: "camera.listFiles entry is not an object")
            }
            return try OSCFileEntry(object: o)
        }
        totalEntries = OSC.int(results["totalEntries"]).map(Int.init) ?? entries.count
    }
}
