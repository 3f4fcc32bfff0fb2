import Foundation
import NVRHTTP
import NVRPlayback
import NVRRecorder
import NVRTime

extension FuzzTargets {
    /// What a request's query and headers carry: times, days, months and zones, Range, and the
    /// recording settings the API and the CLI accept (schedules, motion masks).
    static let httpQuery: Target = { data in
        let parts = pieces(data).map(text)
        func part(_ i: Int) -> String { i < parts.count ? parts[i] : "" }
        switch Time90k.parseChecked(part(0)) {
        case .success(let t):
            precondition(Time90k.isSupported(t))
            // Every supported time prints as RFC 3339 that reads back to the same millisecond.
            let printed = Time90k.rfc3339(t)
            precondition(
                Time90k.parse(printed).map { Time90k.floorDiv($0, 90) == Time90k.floorDiv(t, 90) } == true, printed)
        case .failure: break
        }
        let zone = try? LocalDays(tz: part(1).isEmpty ? "UTC" : part(1))
        if let zone {
            if let day = try? zone.day(part(2)) {
                precondition(day.lowerBound < day.upperBound && Time90k.length(day) <= 26 * 3600 * 90_000)
            }
            _ = try? zone.month(part(2))
        }
        let size = Int64(part(3)) ?? 1_000_000
        switch ByteRange.parse(part(4), size: size) {
        case .range(let r): precondition(r.first >= 0 && r.first <= r.last && r.last < size)
        case .whole, .unsatisfiable: break
        }
        if let schedule = try? RecordingSchedule(part(5), tz: "Europe/Paris") {
            _ = schedule.mode(at: Time90k.parse(part(0)) ?? 0)
        }
        _ = try? MotionSettings.parseMask(part(6))
    }
}
