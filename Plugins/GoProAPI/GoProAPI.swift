import Foundation

/// Decoders for the Open GoPro HTTP API 2.0 answers the NVR uses (see PROTOCOLS.md and
/// GoPro's OpenAPI description). A separate module so tests can check them against the
/// OpenAPI reference without loading the plugin library.
///
/// The camera sends most media values as strings even where the specification says integer
/// ("each property actually comes as a string"); every reader here accepts both.
public enum GoProAPI {
    /// The USB (NCM) address of a camera: 172.2X.1YZ.51, XYZ = the serial number's last three digits.
    public static func usbBaseURL(serial: String) throws -> String {
        let digits = serial.filter(\.isNumber)
        guard serial.count >= 3, digits.count >= 3, serial.suffix(3).allSatisfy(\.isNumber) else {
            throw GoProError("serial number '\(serial)' does not end in three digits")
        }
        let d = Array(serial.suffix(3))
        return "http://172.2\(d[0]).1\(d[1])\(d[2]).51:8080"
    }

    /// Parses a JSON object, with a clear error naming the endpoint.
    public static func object(_ data: Data, from endpoint: String) throws -> [String: Any] {
        guard let obj = try? JSONSerialization.jsonObject(with: data), let dict = obj as? [String: Any] else {
            let preview = String(decoding: data.prefix(80), as: UTF8.self)
            throw GoProError("malformed JSON from \(endpoint): '\(preview)'")
        }
        return dict
    }

    /// An integer given as a JSON number or a decimal string.
    /// Epoch seconds between 1970 and 9999 (camera clocks are outside input).
    public static func plausibleTime(_ t: Int64) -> Bool { t >= 0 && t < 253_402_300_800 }

    public static func int(_ v: Any?) -> Int64? {
        switch v {
        case let n as NSNumber: return n.int64Value
        case let s as String: return Int64(s.trimmingCharacters(in: .whitespaces))
        default: return nil
        }
    }
}

public struct GoProError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ m: String) { description = m }
}

/// `GET /gopro/camera/state`: the statuses an NVR shows and acts on.
public struct GoProState: Sendable, Equatable {
    public enum Storage: Int64, Sendable {
        case unknown = -1
        case ok = 0
        case full = 1
        case removed = 2
        case formatError = 3
        case busy = 4
        case swapped = 8
        public var text: String {
            switch self {
            case .unknown: "unknown"
            case .ok: "ok"
            case .full: "full"
            case .removed: "no card"
            case .formatError: "format error"
            case .busy: "busy"
            case .swapped: "swapped"
            }
        }
    }
    public var batteryPresent: Bool?
    /// 0–3 bars, 4 = charging.
    public var batteryBars: Int?
    public var batteryPercent: Int?
    public var busy = false
    public var encoding = false
    public var encodingSeconds: Int?
    public var overheating = false
    public var previewActive = false
    public var previewAvailable: Bool?
    public var storage: Storage?
    public var remainingVideoMinutes: Int?
    public var sdRemainingKB: Int64?
    public var sdCapacityKB: Int64?
    /// Status 60: the shortest poll period the camera asks for.
    public var minPollMilliseconds: Int?

    public init() {}

    public init(json data: Data) throws {
        let root = try GoProAPI.object(data, from: "/gopro/camera/state")
        guard let status = root["status"] as? [String: Any] else {
            throw GoProError("malformed answer from /gopro/camera/state: no \"status\" object")
        }
        func v(_ id: Int) -> Int64? { GoProAPI.int(status[String(id)]) }
        batteryPresent = v(1).map { $0 != 0 }
        batteryBars = v(2).map(Int.init)
        batteryPercent = v(70).map(Int.init)
        busy = (v(8) ?? 0) != 0
        encoding = (v(10) ?? 0) != 0
        encodingSeconds = v(13).map(Int.init)
        overheating = (v(6) ?? 0) != 0
        previewActive = (v(32) ?? 0) != 0
        previewAvailable = v(55).map { $0 != 0 }
        storage = v(33).map { Storage(rawValue: $0) ?? .unknown }
        remainingVideoMinutes = v(35).map(Int.init)
        sdRemainingKB = v(54)
        sdCapacityKB = v(117)
        minPollMilliseconds = v(60).map(Int.init)
    }
}

/// `GET /gopro/camera/get_date_time`: the camera's wall clock.
public struct GoProDateTime: Sendable, Equatable {
    /// The camera's local wall clock read as if it were UTC (seconds since the epoch).
    public var localEpoch: Int64
    /// Offset from UTC in minutes, when the camera says.
    public var zoneMinutes: Int?
    public var dst: Bool?

    public init(json data: Data) throws {
        let root = try GoProAPI.object(data, from: "/gopro/camera/get_date_time")
        guard let date = root["date"] as? String, let time = root["time"] as? String else {
            throw GoProError("malformed answer from /gopro/camera/get_date_time: no date or time")
        }
        let d = date.split(separator: "_").compactMap { Int($0) }
        let t = time.split(separator: "_").compactMap { Int($0) }
        guard d.count == 3, t.count == 3 else { throw GoProError("unreadable camera date/time '\(date) \(time)'") }
        var c = DateComponents()
        c.year = d[0]
        c.month = d[1]
        c.day = d[2]
        c.hour = t[0]
        c.minute = t[1]
        c.second = t[2]
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = TimeZone(identifier: "UTC")!
        guard let when = cal.date(from: c) else { throw GoProError("unreadable camera date/time '\(date) \(time)'") }
        localEpoch = Int64(when.timeIntervalSince1970)
        zoneMinutes = GoProAPI.int(root["tzone"]).map(Int.init)
        dst = GoProAPI.int(root["dst"]).map { $0 != 0 }
    }
}

/// `GET /gopro/media/list`.
public struct GoProMediaList: Sendable, Equatable {
    public struct Item: Sendable, Equatable {
        public var directory: String
        public var name: String
        /// Creation time: the camera's local wall clock as epoch seconds.
        public var created: Int64
        public var modified: Int64
        /// Bytes for a single file; for a group, the number of members.
        public var size: Int64
        /// Set for grouped media (bursts, lapses): the group type b, c, n or t.
        public var groupType: String?
        public var path: String { directory + "/" + name }
        public init(
            directory: String, name: String, created: Int64, modified: Int64, size: Int64, groupType: String? = nil
        ) {
            self.directory = directory
            self.name = name
            self.created = created
            self.modified = modified
            self.size = size
            self.groupType = groupType
        }
        public var isVideo: Bool { groupType == nil && name.uppercased().hasSuffix(".MP4") }
    }
    public var id: String
    public var items: [Item]

    public init(json data: Data) throws {
        let endpoint = "/gopro/media/list"
        let root = try GoProAPI.object(data, from: endpoint)
        guard let media = root["media"] as? [[String: Any]] else {
            throw GoProError("malformed answer from \(endpoint): no \"media\" array")
        }
        id = root["id"] as? String ?? GoProAPI.int(root["id"]).map(String.init) ?? ""
        var out: [Item] = []
        for dir in media {
            guard let d = dir["d"] as? String, let fs = dir["fs"] as? [[String: Any]] else {
                throw GoProError("malformed answer from \(endpoint): a directory lacks \"d\" or \"fs\"")
            }
            for f in fs {
                guard let n = f["n"] as? String, let cre = GoProAPI.int(f["cre"]), let s = GoProAPI.int(f["s"]) else {
                    throw GoProError("malformed answer from \(endpoint): an item in \(d) lacks n, cre or s")
                }
                // A file stamped outside 1970–9999 or with a negative size is not listed.
                guard GoProAPI.plausibleTime(cre), s >= 0 else { continue }
                out.append(
                    Item(
                        directory: d, name: n, created: cre, modified: GoProAPI.int(f["mod"]) ?? cre, size: s,
                        groupType: f["g"] != nil ? (f["t"] as? String ?? "?") : nil))
            }
        }
        items = out
    }
}

/// `GET /gopro/media/info?path=` for a video.
public struct GoProMediaInfo: Sendable, Equatable {
    public var created: Int64
    public var size: Int64
    /// Whole seconds, as the camera reports it.
    public var durationSeconds: Int64
    public var width: Int?
    public var height: Int?
    public var fps: Double?

    public init(json data: Data) throws {
        let endpoint = "/gopro/media/info"
        let root = try GoProAPI.object(data, from: endpoint)
        guard let cre = GoProAPI.int(root["cre"]), let s = GoProAPI.int(root["s"]) else {
            throw GoProError("malformed answer from \(endpoint): no cre or s")
        }
        guard let dur = GoProAPI.int(root["dur"]) else { throw GoProError("\(endpoint): not a video (no dur)") }
        guard GoProAPI.plausibleTime(cre), s >= 0, (0...7 * 86_400).contains(dur) else {
            throw GoProError("\(endpoint): implausible cre \(cre), size \(s) or dur \(dur)")
        }
        created = cre
        size = s
        durationSeconds = dur
        width = GoProAPI.int(root["w"]).map(Int.init)
        height = GoProAPI.int(root["h"]).map(Int.init)
        if let n = GoProAPI.int(root["fps"]), n > 0 {
            let d = GoProAPI.int(root["fps_denom"]) ?? 1
            // The reference example gives fps 1001 / fps_denom 30000 (the inverse); take whichever reads as a rate.
            fps = n >= d ? Double(n) / Double(max(d, 1)) : Double(d) / Double(n)
        }
    }
}

/// A GoPro video file name: `G<quality><chapter 01-99><id 0001-9999>.MP4` (or GOPRnnnn.MP4 on old models).
public struct GoProFileName: Sendable, Equatable {
    public var chapter: Int
    public var recording: Int

    public init?(_ name: String) {
        let base = name.uppercased()
        guard base.hasSuffix(".MP4") else { return nil }
        let stem = Array(base.dropLast(4))
        if stem.count == 8, stem[0] == "G", let ch = Int(String(stem[2...3])), let id = Int(String(stem[4...7])),
            "XHMLOP".contains(stem[1]) || stem[1].isNumber
        {
            chapter = ch
            recording = id
        } else if stem.count == 8, String(stem[0...3]) == "GOPR", let id = Int(String(stem[4...7])) {
            chapter = 1
            recording = id
        } else {
            return nil
        }
    }
}

/// One video on the card with its time span, ready for the host's card_list JSON.
public struct GoProCardVideo: Sendable, Equatable {
    public var path: String
    public var name: String
    /// Camera-local wall clock, epoch seconds.
    public var startLocal: Int64
    public var durationSeconds: Int64
    public var size: Int64

    /// A video's span is [cre, cre + dur]. Chapters of one recording share its id; when a later
    /// chapter's `cre` falls inside the previous chapter (some firmware stamps every chapter
    /// with the recording's start) it begins where the previous one ended instead.
    public static func spans(_ videos: [(item: GoProMediaList.Item, info: GoProMediaInfo)]) -> [GoProCardVideo] {
        let sorted = videos.sorted { a, b in
            let na = GoProFileName(a.item.name)
            let nb = GoProFileName(b.item.name)
            if let na, let nb, na.recording == nb.recording, a.item.directory == b.item.directory {
                return na.chapter < nb.chapter
            }
            return (a.item.created, a.item.name) < (b.item.created, b.item.name)
        }
        var out: [GoProCardVideo] = []
        for v in sorted {
            var start = v.item.created
            if let prev = out.last, let pn = GoProFileName(prev.name), let n = GoProFileName(v.item.name),
                pn.recording == n.recording, n.chapter == pn.chapter + 1, start < prev.startLocal + prev.durationSeconds
            {
                start = prev.startLocal + prev.durationSeconds
            }
            out.append(
                GoProCardVideo(
                    path: v.item.path, name: v.item.name, startLocal: start, durationSeconds: v.info.durationSeconds,
                    size: v.item.size))
        }
        return out
    }
}
