import NVRIndex
import Testing

@testable import NVRRecorder

/// The one place capture time is computed: packets that arrive late (a probing buffer, a
/// network stall), cameras whose clocks run fast or slow, timestamps that jump.
@Suite struct CaptureClockTests {
    static let s: Int64 = 90_000
    static let frame: Int64 = s / 25
    static let t0: Int64 = 1_800_000_000 * s

    /// A repeatable delay between `low` and `high` ticks for frame `n`.
    static func delay(_ n: Int64, low: Int64, high: Int64) -> Int64 {
        var x = UInt64(bitPattern: n &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407)
        x ^= x >> 33
        return low + Int64(x % UInt64(high - low + 1))
    }

    @Test func settlesOnTheLeastDelayedPacketAndStaysMonotonic() {
        var clock = CaptureClock(settle90k: 4 * Self.s)
        var previous: Int64 = .min
        var errors: [Int64] = []
        for n in Int64(0)..<(60 * 25) {
            let t = n * Self.frame
            // The first second arrives at once, 1.5 s in (what libavformat read while probing);
            // then each frame 20–250 ms late, at least 20 ms.
            let arrival = n < 25 ? Self.t0 + 3 * Self.s / 2 : Self.t0 + t + Self.delay(n, low: 20 * 90, high: 250 * 90)
            var jumped = false
            let c = clock.wallTime(media: t, arrival: arrival, jumped: &jumped)
            #expect(jumped == (n == 0))
            // While settling, capture times step back as less-delayed packets come (the
            // segmenter refines the first segment's start for that); after it, only forward.
            if n > 100 { #expect(c > previous, "capture times only move forward (frame \(n))") }
            previous = c
            errors.append(c - (Self.t0 + t))
        }
        // Settled (4 s): every capture time is the true one plus the least delay seen so far
        // (some frame in the first 4 s lands within a few ms of 20), never less than 20 ms:
        // the burst held back by probing does not count.
        let least = (Int64(25)..<100).map { Self.delay($0, low: 20 * 90, high: 250 * 90) }.min()!
        #expect(least < 30 * 90)
        let settled = errors.dropFirst(100)
        #expect(
            settled.allSatisfy { $0 >= 20 * 90 && $0 <= least },
            "after settling: \(settled.min()!)…\(settled.max()!) ticks late")
        #expect(errors[0] == 3 * Self.s / 2, "before any other packet, the first one's arrival is all there is")
    }

    /// A camera whose clock runs `ppm` fast (+) or slow (−) against the wall clock, for two
    /// hours: capture time follows the wall clock, in steps no viewer sees.
    @Test(arguments: [-300, 300, 0]) func followsACameraClockThatDrifts(ppm: Int64) {
        var clock = CaptureClock(settle90k: 60 * Self.s)
        let frames = Int64(2 * 3600 * 25)
        var previous: (media: Int64, capture: Int64)?
        var worstStep: Int64 = 0
        var lastError: Int64 = 0
        for n in 0..<frames {
            let wall = n * Self.frame
            let media = wall + wall * ppm / 1_000_000
            let arrival = Self.t0 + wall + Self.delay(n, low: 20 * 90, high: 120 * 90)
            var jumped = false
            let c = clock.wallTime(media: media, arrival: arrival, jumped: &jumped)
            // After the first minute (the settling, which may step back to the least delay).
            if let p = previous, n > 60 * 25 { worstStep = max(worstStep, abs((c - p.capture) - (media - p.media))) }
            previous = (media, c)
            lastError = c - (Self.t0 + wall)
        }
        // The least delay is about 20 ms; a clock that is never corrected would be off by
        // 300 ppm × 2 h = 2.16 s.
        #expect(
            lastError >= 15 * 90 && lastError <= 40 * 90, "off by \(Double(lastError) / 90) ms after 2 h at \(ppm) ppm")
        // One correction per 10 s window, at most 500 ppm of it: 5 ms.
        #expect(worstStep <= 10 * Self.s * CaptureClock.maxSlewPPM / 1_000_000 + 1, "a step of \(worstStep) ticks")
    }

    @Test func aBurstOfLatePacketsDoesNotMoveIt() {
        var clock = CaptureClock(settle90k: 4 * Self.s)
        var errors: [Int64: Int64] = [:]
        for n in Int64(0)..<(60 * 25) {
            let t = n * Self.frame
            // 20 ms late, but frames 30–33 s are held by a 3 s network stall and arrive at once.
            let stalled = t >= 30 * Self.s && t < 33 * Self.s
            let arrival = stalled ? Self.t0 + 33 * Self.s + 20 * 90 : Self.t0 + t + 20 * 90
            var jumped = false
            errors[n] = clock.wallTime(media: t, arrival: arrival, jumped: &jumped) - (Self.t0 + t)
        }
        #expect(
            errors.values.allSatisfy { $0 == 20 * 90 },
            "capture time stays 20 ms behind throughout, the stalled frames too: \(errors.values.min()!)…\(errors.values.max()!)"
        )
    }

    @Test func aTimestampJumpAnchorsAgain() {
        var clock = CaptureClock(settle90k: 4 * Self.s)
        var jumped = false
        _ = clock.wallTime(media: 100 * Self.s, arrival: Self.t0, jumped: &jumped)
        jumped = false
        #expect(
            clock.wallTime(media: 101 * Self.s, arrival: Self.t0 + Self.s + 500, jumped: &jumped) == Self.t0 + Self.s)
        #expect(!jumped)
        // Back in time (a camera restarted its clock): anchored at the arrival.
        #expect(
            clock.wallTime(media: 3 * Self.s, arrival: Self.t0 + 2 * Self.s, jumped: &jumped) == Self.t0 + 2 * Self.s)
        #expect(jumped)
        jumped = false
        // Over 5 s forward: the same.
        #expect(
            clock.wallTime(media: 30 * Self.s, arrival: Self.t0 + 3 * Self.s, jumped: &jumped) == Self.t0 + 3 * Self.s)
        #expect(jumped)
        // Media times near Int64's ends (a hostile plugin): no trap.
        _ = clock.wallTime(media: .max, arrival: Self.t0, jumped: &jumped)
        _ = clock.wallTime(media: .min, arrival: .max, jumped: &jumped)
    }
}
