import NVRIndex
import NVRPlayback
import Testing

/// The read side on its own (no recorder in this target): local days, timeline slices, gaps.
@Suite struct LocalDaysTests {
    @Test func dstDaysAndHalfHourZones() throws {
        let ny = try LocalDays(tz: "America/New_York")
        #expect(try ny.day("2026-03-08").count == 23 * 3600 * 90_000)
        #expect(try ny.day("2026-11-01").count == 25 * 3600 * 90_000)
        #expect(try ny.day("2026-11-22").count == 24 * 3600 * 90_000)
        #expect(try ny.day("2026-11-22").lowerBound == Time90k.parse("2026-11-22T05:00:00Z"))
        let kolkata = try LocalDays(tz: "Asia/Kolkata")
        #expect(try kolkata.day("2026-11-22").lowerBound == Time90k.parse("2026-11-21T18:30:00Z"))
        #expect(try kolkata.month("2026-02").count == 28)
        #expect(throws: LocalDays.Invalid.self) { try LocalDays(tz: "Mars/Olympus") }
        #expect(throws: LocalDays.Invalid.self) { try ny.day("2026-02-30") }
        #expect(throws: LocalDays.Invalid.self) { try ny.month("2026-13") }
    }

    @Test func slicesMergeAcrossSlewButNotGaps() {
        func seg(_ start: Int64, _ dur: Int64) -> SegmentRecord {
            SegmentRecord(
                cameraID: 1, runID: 1, runSeq: 0, start90k: start, duration90k: dur, path: "\(start)", bytes: 10,
                videoEntryID: 1, audioEntryID: nil, state: .complete)
        }
        let s = Timeline.slices([seg(0, 5_400_000), seg(5_400_000 - 2700, 5_400_000), seg(20_000_000, 900_000)])
        #expect(s.count == 2)
        #expect(s[0].start90k == 0 && s[0].end90k == 10_797_300 && s[0].segments == 2)
        #expect(Timeline.slices([seg(0, 900_000)], within: 450_000..<2_000_000).first?.start90k == 450_000)
    }
}

@Suite struct RangeGapsTests {
    @Test func spanMinusCoveredRanges() {
        #expect((Int64(0)..<100).gaps(covered: [10..<20, 15..<30, 95..<200], minimum: 5) == [0..<10, 30..<95])
        #expect(
            (Int64(0)..<100).gaps(covered: [30..<40, 0..<10], minimum: 0) == [10..<30, 40..<100],
            "covered ranges in any order")
        #expect((Int64(0)..<100).gaps(covered: [-5..<200], minimum: 0).isEmpty)
        #expect(
            (Int64(0)..<100).gaps(covered: [], minimum: 101).isEmpty, "pieces shorter than the minimum are left out")
    }
}
