import Testing

@testable import NVRTime

struct TimebaseTests {
    @Test func convertsExactlyWhereTheNaiveFormulaDoesNotOverflow() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<5000 {
            let num = Int64.random(in: 1...1000, using: &rng)
            let den = Int64.random(in: 1...1_000_000, using: &rng)
            let t = Int64.random(in: -10_000_000_000...10_000_000_000, using: &rng)  // t · num · 90000 fits
            #expect(Timebase(num, den).to90k(t) == t * num * 90_000 / den)
        }
        #expect(Timebase.ticks90k.to90k(.min) == .min)  // the fast path passes values through
        #expect(Timebase(1, 48_000).rescale(48_000, to: .ticks90k) == 90_000)
        #expect(Timebase.ticks90k.rescale(90_000, to: .rate(44_100)) == 44_100)
    }

    @Test func whatDoesNotFitIsNilNotATrap() {
        // A nanosecond clock after 55 h: t · 90000 overflows Int64, the result does not.
        let ns: Int64 = 200_000 * 1_000_000_000
        #expect(Timebase(1, 1_000_000_000).to90k(ns) == Int64(200_000) * 90_000)
        #expect(Timebase(1, 1).to90k(Int64.max / 1000) == nil)
        #expect(Timebase(Int64(Int32.max), 1).to90k(Int64.max) == nil)
        #expect(Timebase(1, 90_001).to90k(.min) != nil)
        #expect(Timebase(1, 1).to90k(.min) == nil)
        #expect(Timebase(Int64.max, 1).rescale(5, to: .rate(3)) == nil)  // num · den' overflows
        #expect(Timebase(2, 1).rescale(Int64.min / 2, to: .rate(1)) == .min)
    }

    @Test func invalidUnitsFallBackTo90kHz() {
        #expect(Timebase(0, 0) == .ticks90k)
        #expect(Timebase(-1, 25) == .ticks90k)
        #expect(Timebase(Int32(1), Int32(-5)) == .ticks90k)
        #expect(!Timebase.isValid(num: 1, den: 0))
    }
}
