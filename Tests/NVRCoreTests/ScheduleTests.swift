import Foundation
import NVRRecorder
import NVRStorage
import NVRTime
import Testing

/// The weekly schedule: grammar, local times, days that last 23 or 25 hours.
@Suite struct ScheduleTests {
    func t(_ s: String) -> Int64 { Time90k.parse(s)! }

    @Test func weekdayHoursInParisFollowTheClockChange() throws {
        let s = try RecordingSchedule("mon-fri 08:00-18:00 continuous; * events", tz: "Europe/Paris")
        // Friday before the change (UTC+1).
        #expect(s.mode(at: t("2026-03-27T06:59:59Z")) == .events)
        #expect(s.mode(at: t("2026-03-27T07:00:00Z")) == .continuous)
        #expect(s.mode(at: t("2026-03-27T16:59:59Z")) == .continuous)
        #expect(s.mode(at: t("2026-03-27T17:00:00Z")) == .events)
        #expect(s.mode(at: t("2026-03-28T10:00:00Z")) == .events, "Saturday")
        // Monday after it (UTC+2): 08:00 local is 06:00Z.
        #expect(s.mode(at: t("2026-03-30T05:59:59Z")) == .events)
        #expect(s.mode(at: t("2026-03-30T06:00:00Z")) == .continuous)
        #expect(s.mode(at: t("2026-03-30T16:00:00Z")) == .events)
    }

    @Test func rulesOnDaysOf23And25Hours() throws {
        // 2026-03-29: 02:00 CET becomes 03:00 CEST, so 01:00–04:00 local lasts two real hours.
        let spring = try RecordingSchedule("sun 01:00-04:00 off; * continuous", tz: "Europe/Paris")
        #expect(spring.mode(at: t("2026-03-28T23:59:59Z")) == .continuous)
        #expect(spring.mode(at: t("2026-03-29T00:00:00Z")) == .off)
        #expect(spring.mode(at: t("2026-03-29T01:00:00Z")) == .off, "03:00 CEST, just after the jump")
        #expect(spring.mode(at: t("2026-03-29T01:59:59Z")) == .off)
        #expect(spring.mode(at: t("2026-03-29T02:00:00Z")) == .continuous, "04:00 CEST")
        // 2026-10-25: 03:00 CEST becomes 02:00 CET, so 02:00–03:00 local happens twice.
        let autumn = try RecordingSchedule("sun 02:00-03:00 off; * continuous", tz: "Europe/Paris")
        #expect(autumn.mode(at: t("2026-10-24T23:59:59Z")) == .continuous)
        #expect(autumn.mode(at: t("2026-10-25T00:00:00Z")) == .off, "02:00 CEST")
        #expect(autumn.mode(at: t("2026-10-25T01:00:00Z")) == .off, "02:00 CET, the second time")
        #expect(autumn.mode(at: t("2026-10-25T01:59:59Z")) == .off)
        #expect(autumn.mode(at: t("2026-10-25T02:00:00Z")) == .continuous)
    }

    @Test func overnightRangesWholeDaysAndFallThrough() throws {
        let s = try RecordingSchedule("fri 22:00-06:00 off; sat,sun events", tz: "UTC")
        #expect(s.mode(at: t("2026-11-20T21:59:00Z")) == nil, "Friday evening: no rule, the camera's mode")
        #expect(s.mode(at: t("2026-11-20T22:00:00Z")) == .off)
        #expect(s.mode(at: t("2026-11-21T05:59:59Z")) == .off, "Saturday morning still belongs to Friday night")
        #expect(s.mode(at: t("2026-11-21T06:00:00Z")) == .events)
        #expect(s.mode(at: t("2026-11-19T23:00:00Z")) == nil, "Thursday night")
        let wrap = try RecordingSchedule("fri-mon 00:00-24:00 events", tz: "UTC")
        #expect(wrap.mode(at: t("2026-11-23T12:00:00Z")) == .events, "Monday, in a range that wraps the week")
        #expect(wrap.mode(at: t("2026-11-24T12:00:00Z")) == nil, "Tuesday")
        let settings = RecordingSettings(mode: .continuous, schedule: s)
        #expect(settings.mode(at: t("2026-11-19T23:00:00Z")) == .continuous)
        #expect(settings.motionEnabled, "auto motion: the schedule can record events")
    }

    @Test func mistakesAreClearErrors() {
        for (text, tz) in [
            ("mon-fri 08:00-18:00", nil), ("xyz events", nil), ("mon 25:00-26:00 off", nil),
            ("mon 08:00-08:00 off", nil),
            ("", nil), ("mon 8-18 off", nil), ("* continuous", "Mars/Olympus_Mons"),
        ] as [(String, String?)] {
            #expect(throws: ConfigError.self, "\(text)") { try RecordingSchedule(text, tz: tz) }
        }
    }
}
