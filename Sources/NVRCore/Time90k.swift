import Foundation

/// Time on the index's scale: 90 kHz ticks since the Unix epoch.
public enum Time90k {
    public static let hz: Int64 = 90_000

    public static func now() -> Int64 { from(Date()) }

    public static func from(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 90_000).rounded()) }

    public static func date(_ t: Int64) -> Date { Date(timeIntervalSince1970: Double(t) / 90_000) }

    /// RFC 3339 in UTC with milliseconds, e.g. 2026-11-22T10:15:30.250Z (sub-millisecond
    /// ticks are truncated). Plain arithmetic: a formatter object per call cost ~50 µs, and a
    /// timeline answer formats dozens of times.
    public static func rfc3339(_ t: Int64) -> String {
        let ms = t >= 0 ? t / 90 : (t - 89) / 90
        var days = ms >= 0 ? ms / 86_400_000 : (ms - 86_399_999) / 86_400_000
        let msOfDay = ms - days * 86_400_000
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let doe = days - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        var out = [UInt8]()
        out.reserveCapacity(24)
        func put(_ v: Int64, _ width: Int) {
            var digits = [UInt8](repeating: 48, count: width)
            var x = v
            for i in stride(from: width - 1, through: 0, by: -1) { digits[i] = UInt8(48 + x % 10); x /= 10 }
            out += digits
        }
        put(y, 4); out.append(45); put(m, 2); out.append(45); put(d, 2); out.append(84)
        put(msOfDay / 3_600_000, 2); out.append(58); put(msOfDay / 60_000 % 60, 2); out.append(58)
        put(msOfDay / 1000 % 60, 2); out.append(46); put(msOfDay % 1000, 3); out.append(90)
        return String(decoding: out, as: UTF8.self)
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
