import Foundation

/// Local calendar days in a time zone, as 90 kHz ranges. A day is from one local midnight to
/// the next, so DST days last 23 or 25 hours and half-hour zones work.
public struct LocalDays: Sendable {
    /// A time zone, day or month that is not one (said as such, for a 400 or a CLI line).
    public struct Invalid: Error, CustomStringConvertible, Sendable {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    public let timeZone: TimeZone
    /// The zone's name as the user gave it (Foundation calls "UTC" "GMT").
    public let name: String
    private var calendar: Calendar

    /// `tz`: an IANA name such as "Europe/Paris"; nil = the server's zone.
    public init(tz: String?) throws {
        if let tz {
            guard let zone = TimeZone(identifier: tz) else {
                throw Invalid("unknown time zone '\(tz)' (use an IANA name such as Europe/Paris)")
            }
            timeZone = zone
            name = tz
        } else {
            timeZone = .current
            name = TimeZone.current.identifier
        }
        calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
    }

    /// [start, end) of the local day "YYYY-MM-DD".
    public func day(_ date: String) throws -> Range<Int64> {
        let p = date.split(separator: "-", omittingEmptySubsequences: false).compactMap { Int($0) }
        guard p.count == 3, (1970...9999).contains(p[0]),
            let start = calendar.date(from: DateComponents(year: p[0], month: p[1], day: p[2])),
            calendar.component(.day, from: start) == p[2],
            let next = calendar.date(byAdding: .day, value: 1, to: start)
        else {
            throw Invalid("'\(date.prefix(40))' is not a date like 2026-11-22 (years 1970–9999)")
        }
        return Time90k.from(start)..<Time90k.from(next)
    }

    /// [start, end) of the local day that contains `t` (default: now).
    public func today(at t: Int64 = Time90k.now()) throws -> Range<Int64> {
        let c = calendar.dateComponents([.year, .month, .day], from: Time90k.date(t))
        guard let y = c.year, let m = c.month, let d = c.day else {
            throw Invalid("no local day at \(Time90k.rfc3339(t))")
        }
        return try day(String(format: "%04ld-%02ld-%02ld", y, m, d))
    }

    /// Every day of the month "YYYY-MM", with its range.
    public func month(_ month: String) throws -> [(date: String, range: Range<Int64>)] {
        let p = month.split(separator: "-", omittingEmptySubsequences: false).compactMap { Int($0) }
        guard p.count == 2, (1970...9999).contains(p[0]), (1...12).contains(p[1]),
            let first = calendar.date(from: DateComponents(year: p[0], month: p[1], day: 1)),
            let days = calendar.range(of: .day, in: .month, for: first)
        else {
            throw Invalid("'\(month.prefix(40))' is not a month like 2026-11 (years 1970–9999)")
        }
        return try days.map { d in
            let date = String(format: "%04ld-%02ld-%02ld", p[0], p[1], d)
            return (date, try day(date))
        }
    }

    /// Local date-time with offset, for people: 2026-11-22T08:15:00+01:00.
    public func format(_ t: Int64) -> String {
        let f = ISO8601DateFormatter()
        f.timeZone = timeZone
        f.formatOptions = [.withInternetDateTime]
        return f.string(from: Time90k.date(t))
    }
}
