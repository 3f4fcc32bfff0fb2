import Testing

@testable import NVRRecorder

/// The judgement behind `streaming` and `stalled`, on simulated time: frames arriving at
/// 15 a second, with a share of them refused.
struct RecordingProgressTests {
    static let second: UInt64 = 1_000_000_000

    /// Feeds `seconds` of 15 frames a second (a read every 1/15 s), `dropped` of each 15 not
    /// recorded; returns the verdicts that changed, with when.
    static func run(
        _ p: inout RecordingProgress, from start: UInt64, seconds: Int, dropped: Int64,
        totals: inout (received: Int64, dropped: Int64)
    ) -> [(UInt64, RecordingProgress.Verdict)] {
        var changes: [(UInt64, RecordingProgress.Verdict)] = []
        for frame in 0..<(seconds * 15) {
            let now = start + UInt64(frame) * second / 15
            totals.received += 1
            if Int64(frame % 15) < dropped { totals.dropped += 1 }
            if let v = p.update(now: now, received: totals.received, dropped: totals.dropped) {
                changes.append((now, v))
            }
        }
        return changes
    }

    @Test func aCameraWhoseFramesAreRecordedStaysRecording() {
        var p = RecordingProgress()
        var totals: (received: Int64, dropped: Int64) = (0, 0)
        // A key-frame wait at the start (14 of the first 15 frames) is not a stall.
        _ = Self.run(&p, from: 0, seconds: 1, dropped: 14, totals: &totals)
        let changes = Self.run(&p, from: Self.second, seconds: 60, dropped: 0, totals: &totals)
        #expect(changes.isEmpty)
        #expect(p.verdict == .recording)
    }

    @Test func mostFramesRefusedIsAStallWithin6sAndItsEndIsSeen() {
        var p = RecordingProgress()
        var totals: (received: Int64, dropped: Int64) = (0, 0)
        _ = Self.run(&p, from: 0, seconds: 10, dropped: 0, totals: &totals)
        // Then 14 of every 15 frames are refused (a camera whose timestamps jump every frame).
        let start = 10 * Self.second
        let stalled = Self.run(&p, from: start, seconds: 20, dropped: 14, totals: &totals)
        #expect(stalled.count == 1)
        let (at, verdict) = try! #require(stalled.first)
        guard case .stalled(let received, let dropped) = verdict else {
            Issue.record("\(verdict)")
            return
        }
        #expect(
            at - start <= 6 * Self.second,
            "stalled \(Double(at - start) / 1e9) s after the frames started being refused")
        #expect(dropped * 2 > received && received >= 60)
        // Recording again: back to `recording` within 6 s, once.
        let again = start + 20 * Self.second
        let recovered = Self.run(&p, from: again, seconds: 20, dropped: 0, totals: &totals)
        #expect(recovered.count == 1 && recovered.first?.1 == .recording)
        #expect((recovered.first?.0 ?? .max) - again <= 6 * Self.second)
    }

    @Test func aThirdRefusedIsNotAStall() {
        var p = RecordingProgress()
        var totals: (received: Int64, dropped: Int64) = (0, 0)
        #expect(Self.run(&p, from: 0, seconds: 30, dropped: 5, totals: &totals).isEmpty)
    }

    @Test func nothingArrivingIsTheWatchdogsNotAStall() {
        var p = RecordingProgress()
        for s in 0..<30 { #expect(p.update(now: UInt64(s) * Self.second, received: 100, dropped: 50) == nil) }
        #expect(p.verdict == .recording)
    }
}
