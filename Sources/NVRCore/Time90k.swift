import Foundation

/// Time on the index's scale: 90 kHz ticks since the Unix epoch.
public enum Time90k {
    public static let hz: Int64 = 90_000

    public static func now() -> Int64 { from(Date()) }

    public static func from(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 90_000).rounded()) }

    public static func date(_ t: Int64) -> Date { Date(timeIntervalSince1970: Double(t) / 90_000) }

    /// RFC 3339 in UTC with milliseconds, e.g. 2026-11-22T10:15:30.250Z.
    public static func rfc3339(_ t: Int64) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.string(from: date(t))
    }

    /// Parses RFC 3339 (with or without fractional seconds) or a plain 90 kHz integer.
    public static func parse(_ s: String) -> Int64? {
        if let v = Int64(s) { return v }
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let d = f.date(from: s) { return from(d) }
        f.formatOptions = [.withInternetDateTime]
        if let d = f.date(from: s) { return from(d) }
        return nil
    }

    /// "1m 02.5s" style duration for people.
    public static func describeDuration(_ ticks: Int64) -> String {
        let s = Double(ticks) / 90_000
        if s < 60 { return String(format: "%.1fs", s) }
        let m = Int(s / 60), rest = s - Double(m * 60)
        if m < 60 { return String(format: "%dm %04.1fs", m, rest) }
        return String(format: "%dh %02dm %04.1fs", m / 60, m % 60, rest)
    }
}
