/// A stream's time unit, num/den seconds (libav's AVRational, an RTP clock as 1/rate), and
/// overflow-checked conversion between units.
///
/// Timestamps come from cameras and plugins: a nanosecond clock, a timebase of 1/1, or a
/// value near Int64's end must give "cannot convert" (nil), never a trap. The product
/// t · num · den' is formed in 128 bits, so any timestamp whose result fits converts exactly
/// as `t * num * den' / (den * num')` would have (rounding toward zero).
public struct Timebase: Sendable, Equatable, CustomStringConvertible {
    public var num: Int64
    public var den: Int64

    /// Invalid units (zero or negative parts) become 1/90000, so a stream with a bogus unit
    /// still gets times; callers that must refuse it check `isValid` first.
    public init<T: BinaryInteger>(_ num: T, _ den: T) {
        if let n = Int64(exactly: num), let d = Int64(exactly: den), n > 0, d > 0 {
            self.num = n
            self.den = d
        } else {
            self.num = 1
            self.den = 90_000
        }
    }

    public static func isValid(num: Int64, den: Int64) -> Bool { num > 0 && den > 0 }

    /// The index's unit: 90 kHz.
    public static let ticks90k = Timebase(1, 90_000)
    /// A sample-rate unit (1/48000 for 48 kHz audio).
    public static func rate(_ hz: Int64) -> Timebase { Timebase(1, hz) }

    public var description: String { "\(num)/\(den)" }

    /// `t` in 90 kHz ticks, or nil if the result does not fit in Int64.
    @inline(__always)
    public func to90k(_ t: Int64) -> Int64? {
        if num == 1 && den == 90_000 { return t }
        return rescale(t, to: .ticks90k)
    }

    /// `t` (in this unit) in `target`'s unit, or nil if it does not fit.
    public func rescale(_ t: Int64, to target: Timebase) -> Int64? {
        if self == target { return t }
        // t · (num · target.den) / (den · target.num); both factors come from Int32 parts
        // in practice, but are checked all the same.
        let (mul, o1) = num.multipliedReportingOverflow(by: target.den)
        let (div, o2) = den.multipliedReportingOverflow(by: target.num)
        guard !o1, !o2, mul > 0, div > 0 else { return nil }
        return Self.mulDiv(t, UInt64(mul), UInt64(div))
    }

    /// t · mul / div in 128 bits, rounded toward zero; nil if the quotient leaves Int64.
    static func mulDiv(_ t: Int64, _ mul: UInt64, _ div: UInt64) -> Int64? {
        let product = t.magnitude.multipliedFullWidth(by: mul)
        guard product.high < div else { return nil }  // the quotient would not fit in 64 bits
        let q = div.dividingFullWidth(product).quotient
        if t < 0 {
            guard q <= UInt64(Int64.max) + 1 else { return nil }
            return q == UInt64(Int64.max) + 1 ? .min : -Int64(q)
        }
        guard q <= UInt64(Int64.max) else { return nil }
        return Int64(q)
    }
}
