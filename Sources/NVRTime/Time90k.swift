import Foundation

/// Time on the index's scale: 90 kHz ticks since the Unix epoch.
///
/// Every time that comes from outside (a query string, a plugin, a camera's clock, a file) is
/// checked against `supported` before any arithmetic is done with it, and the arithmetic
/// helpers here saturate instead of trapping: one odd value must never stop the recorder.
public enum Time90k {
    public static let hz: Int64 = 90_000

    /// 1970-01-01T00:00:00Z through 9999-12-31T23:59:59.999Z: what the API and the CLI accept.
    /// Far from Int64's ends, so a supported time plus or minus a supported duration (up to
    /// ~8000 years) cannot overflow.
    public static let supported: ClosedRange<Int64> = 0...(253_402_300_800 * 90_000 - 1)

    public static func isSupported(_ t: Int64) -> Bool { supported.contains(t) }

    public static func now() -> Int64 { from(Date()) }

    /// The date in ticks, saturating at Int64's ends (and 0 for NaN).
    public static func from(_ date: Date) -> Int64 { ticks(seconds: date.timeIntervalSince1970) }

    /// Seconds (as a camera or a plugin gives them) in ticks, rounded, saturating at Int64's
    /// ends; NaN is 0. Check the result with `isSupported` when it comes from outside.
    public static func ticks(seconds: Double) -> Int64 {
        guard !seconds.isNaN else { return 0 }
        let v = (seconds * 90_000).rounded()
        if v >= 9.2e18 { return .max }
        if v <= -9.2e18 { return .min }
        return Int64(v)
    }

    public static func date(_ t: Int64) -> Date { Date(timeIntervalSince1970: Double(t) / 90_000) }

    // MARK: Saturating arithmetic

    /// t + d, or Int64's end in the direction of the overflow.
    @inline(__always)
    public static func add(_ t: Int64, _ d: Int64) -> Int64 {
        let (r, o) = t.addingReportingOverflow(d)
        return o ? (d > 0 ? .max : .min) : r
    }

    /// t − d, saturating.
    @inline(__always)
    public static func subtract(_ t: Int64, _ d: Int64) -> Int64 {
        let (r, o) = t.subtractingReportingOverflow(d)
        return o ? (d < 0 ? .max : .min) : r
    }

    /// The length of a range, saturating (a `Range<Int64>`'s `count` traps past Int.max).
    @inline(__always)
    public static func length(_ r: Range<Int64>) -> Int64 { subtract(r.upperBound, r.lowerBound) }

    // MARK: Text

    /// RFC 3339 in UTC with milliseconds, e.g. 2026-11-22T10:15:30.250Z (sub-millisecond
    /// ticks are truncated toward the past). Defined for every Int64: years outside
    /// 0000–9999 are written in ISO 8601's expanded form (-0100, +10000). Plain arithmetic: a
    /// formatter object per call cost ~50 µs, and a timeline answer formats dozens of times.
    public static func rfc3339(_ t: Int64) -> String {
        let ms = floorDiv(t, 90)
        var days = floorDiv(ms, 86_400_000)
        let msOfDay = ms - days * 86_400_000
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm); |days| < 1.2e9.
        days += 719_468
        let era = floorDiv(days, 146_097)
        let doe = days - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        var out = [UInt8]()
        out.reserveCapacity(26)
        func put(_ v: Int64, _ width: Int) {
            var digits = [UInt8]()
            var x = v
            repeat {
                digits.append(UInt8(48 + x % 10))
                x /= 10
            } while x > 0
            while digits.count < width { digits.append(48) }
            out += digits.reversed()
        }
        if y < 0 { out.append(45) } else if y > 9999 { out.append(43) }
        put(abs(y), 4)
        out.append(45)
        put(m, 2)
        out.append(45)
        put(d, 2)
        out.append(84)
        put(msOfDay / 3_600_000, 2)
        out.append(58)
        put(msOfDay / 60_000 % 60, 2)
        out.append(58)
        put(msOfDay / 1000 % 60, 2)
        out.append(46)
        put(msOfDay % 1000, 3)
        out.append(90)
        return String(decoding: out, as: UTF8.self)
    }

    /// Division rounding toward −∞, with no intermediate that can overflow.
    @inline(__always)
    package static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    /// Why a time given as text was refused.
    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case malformed
        case outOfRange
        public var description: String {
            switch self {
            case .malformed: "is not a time: use RFC 3339 (2026-11-22T08:00:00Z) or 90 kHz ticks since 1970"
            case .outOfRange: "is outside the supported times (1970-01-01 to 9999-12-31)"
            }
        }
    }

    /// Parses RFC 3339 (with or without fractional seconds) or a plain 90 kHz integer, and
    /// checks it is a supported time.
    public static func parseChecked(_ s: String) -> Result<Int64, ParseError> {
        guard s.utf8.count <= 64 else { return .failure(.malformed) }
        var t: Int64?
        if let v = Int64(s) {
            t = v
        } else if isInteger(s) {
            return .failure(.outOfRange)  // an integer past Int64
        } else {
            // The fraction is read from its digits: through a Double of seconds, a time past
            // the year ~4000 would lose ticks and print back a millisecond early. The
            // formatter checks and reads the rest, to whole seconds (exact in a Double).
            var whole = Substring(s)
            var fraction: Int64 = 0
            if let dot = s.firstIndex(of: ".") {
                let digits = s[s.index(after: dot)...].prefix { $0 >= "0" && $0 <= "9" }
                guard digits.count <= 9, var ns = Int64(digits) else { return .failure(.malformed) }
                for _ in digits.count..<9 { ns *= 10 }
                fraction = ns * 9 / 100_000  // ns → 90 kHz ticks, toward the past
                whole = s[..<dot] + s[digits.endIndex...]
            }
            let f = ISO8601DateFormatter()
            f.formatOptions = [.withInternetDateTime]
            guard let seconds = f.date(from: String(whole))?.timeIntervalSince1970.rounded() else {
                return .failure(.malformed)
            }
            guard seconds.magnitude < 1e13 else { return .failure(.outOfRange) }
            t = Int64(seconds) * 90_000 + fraction
        }
        guard let t else { return .failure(.malformed) }
        return isSupported(t) ? .success(t) : .failure(.outOfRange)
    }

    /// An optional sign and one or more ASCII digits.
    static func isInteger(_ s: String) -> Bool {
        var digits = Substring(s).utf8
        if let first = digits.first, first == 43 || first == 45 { digits = digits.dropFirst() }
        return !digits.isEmpty && digits.allSatisfy { $0 >= 48 && $0 <= 57 }
    }

    /// `parseChecked`, nil for anything refused.
    public static func parse(_ s: String) -> Int64? { try? parseChecked(s).get() }

    /// "1m 02.5s" style duration for people.
    public static func describeDuration(_ ticks: Int64) -> String {
        let s = Double(ticks) / 90_000
        if s.magnitude < 60 { return String(format: "%.1fs", s) }
        let sign = s < 0 ? "-" : ""
        let a = s.magnitude
        let m = Int64(a / 60)
        let rest = a - Double(m) * 60
        if m < 60 { return sign + String(format: "%lldm %04.1fs", m, rest) }
        return sign + String(format: "%lldh %02lldm %04.1fs", m / 60, m % 60, rest)
    }
}
