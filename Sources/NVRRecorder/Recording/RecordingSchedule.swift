import Foundation
import NVRStorage
import NVRTime

/// A weekly schedule of recording modes in local time.
///
/// Grammar (design/motion.md): rules separated by `;`, each `DAYS [HH:MM-HH:MM] MODE`.
/// DAYS is `*` or a comma list of days and day ranges (`mon-fri`, `sat,sun`, `fri-mon`);
/// without a time range the rule covers whole days; `24:00` ends a day; a range that ends
/// before it starts runs past midnight and belongs to the day it starts on (`fri 22:00-06:00`
/// is Friday night into Saturday). The first rule that matches wins; when none does the
/// camera's own mode applies. Example: `mon-fri 08:00-18:00 continuous; * events`.
/// Times are wall-clock times in the zone, so rules follow DST (a rule at 02:30 on the day
/// clocks jump from 02:00 to 03:00 starts at 03:00).
public struct RecordingSchedule: Sendable, Equatable {
    public struct Rule: Sendable, Equatable {
        /// Weekdays, 1 = Sunday … 7 = Saturday (Calendar's numbering).
        public var days: Set<Int>
        /// Seconds since local midnight; nil = the whole day.
        public var from: Int?
        public var to: Int?
        public var mode: RecordingMode
    }

    public let rules: [Rule]
    public let text: String
    public let timeZone: TimeZone
    private let calendar: Calendar

    private static let dayNames = ["sun": 1, "mon": 2, "tue": 3, "wed": 4, "thu": 5, "fri": 6, "sat": 7]

    /// Parses `text`; `tz` is an IANA zone name (nil = the server's).
    public init(_ text: String, tz: String? = nil) throws {
        self.text = text
        if let tz {
            guard let z = TimeZone(identifier: tz) else {
                throw ConfigError("unknown time zone '\(tz)' (use an IANA name such as Europe/Paris)")
            }
            timeZone = z
        } else {
            timeZone = .current
        }
        var c = Calendar(identifier: .gregorian)
        c.timeZone = timeZone
        calendar = c
        var rules: [Rule] = []
        for part in text.split(separator: ";") {
            let words = part.split(whereSeparator: \.isWhitespace).map { $0.lowercased() }
            if words.isEmpty { continue }
            guard words.count == 2 || words.count == 3 else {
                throw ConfigError(
                    "schedule rule '\(part.trimmingCharacters(in: .whitespaces))' should be DAYS [HH:MM-HH:MM] MODE, e.g. mon-fri 08:00-18:00 continuous"
                )
            }
            guard let mode = RecordingMode(rawValue: words.last!) else {
                throw ConfigError("schedule: unknown mode '\(words.last!)' (continuous, events or off)")
            }
            let days = try Self.parseDays(words[0])
            var from: Int?
            var to: Int?
            if words.count == 3 {
                let ends = words[1].split(separator: "-", omittingEmptySubsequences: false)
                guard ends.count == 2, let a = Self.parseClock(ends[0]), let b = Self.parseClock(ends[1]), a < 86_400
                else {
                    throw ConfigError("schedule: '\(words[1])' is not a time range like 08:00-18:00")
                }
                guard a != b else { throw ConfigError("schedule: '\(words[1])' is empty") }
                from = a
                to = b
            }
            rules.append(Rule(days: days, from: from, to: to, mode: mode))
        }
        guard !rules.isEmpty else { throw ConfigError("schedule is empty") }
        self.rules = rules
    }

    static func parseDays(_ s: String) throws -> Set<Int> {
        if s == "*" { return Set(1...7) }
        var out = Set<Int>()
        for item in s.split(separator: ",") {
            let ends = item.split(separator: "-")
            guard let a = dayNames[String(ends.first ?? "")], ends.count <= 2 else {
                throw ConfigError("schedule: '\(item)' is not a day or day range (mon, tue, … sun, mon-fri, *)")
            }
            guard ends.count == 2 else {
                out.insert(a)
                continue
            }
            guard let b = dayNames[String(ends[1])] else { throw ConfigError("schedule: '\(ends[1])' is not a day") }
            var d = a
            while true {
                out.insert(d)
                if d == b { break }
                d = d % 7 + 1
            }
        }
        return out
    }

    /// "HH:MM" → seconds since midnight (24:00 allowed).
    static func parseClock(_ s: Substring) -> Int? {
        let p = s.split(separator: ":")
        guard p.count == 2, p[0].count <= 2, p[1].count == 2, let h = Int(p[0]), let m = Int(p[1]),
            (0...59).contains(m), (0...24).contains(h), h < 24 || m == 0
        else { return nil }
        return h * 3600 + m * 60
    }

    /// The mode the schedule asks for at `t`, or nil when no rule matches.
    public func mode(at t: Int64) -> RecordingMode? {
        let c = calendar.dateComponents([.weekday, .hour, .minute, .second], from: Time90k.date(t))
        guard let day = c.weekday else { return nil }
        let secs = (c.hour ?? 0) * 3600 + (c.minute ?? 0) * 60 + (c.second ?? 0)
        let yesterday = (day + 5) % 7 + 1
        for r in rules {
            guard let from = r.from, let to = r.to else {
                if r.days.contains(day) { return r.mode }
                continue
            }
            if from < to {
                if r.days.contains(day) && from <= secs && secs < to { return r.mode }
            } else if (r.days.contains(day) && secs >= from) || (r.days.contains(yesterday) && secs < to) {
                return r.mode
            }
        }
        return nil
    }
}
