import Foundation
import Testing

@testable import NVRTime

struct Time90kTests {
    @Test func rfc3339MatchesFoundationAndRoundTrips() throws {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var rng = SystemRandomNumberGenerator()
        // Millisecond-aligned times from 1901 to 2400, leap days and epoch edges included;
        // those before 1970 format but are not accepted back.
        var samples: [Int64] = [0, -90, 90, 951_782_400_000 * 90, 4_107_542_400_000 * 90, -2_208_988_800_000 * 90]
        for _ in 0..<2000 {
            samples.append(Int64.random(in: -2_000_000_000_000...13_000_000_000_000, using: &rng) * 90)
        }
        for t in samples {
            let ours = Time90k.rfc3339(t)
            #expect(ours == f.string(from: Date(timeIntervalSince1970: Double(t / 90) / 1000)), "\(t)")
            #expect(Time90k.parse(ours) == (t >= 0 ? t : nil))
        }
        #expect(Time90k.rfc3339(Time90k.parse("2024-02-29T23:59:59.999Z")!) == "2024-02-29T23:59:59.999Z")
        #expect(Time90k.rfc3339(89) == "1970-01-01T00:00:00.000Z")  // truncated, not rounded
        // Far years too (a Double of seconds there is coarser than a tick; the fuzzer found it).
        for t: Int64 in [16_151_585_061_637_144, Time90k.supported.upperBound, Time90k.supported.upperBound - 90 * 999]
        {
            #expect(Time90k.parse(Time90k.rfc3339(t)).map { $0 / 90 } == t / 90, "\(Time90k.rfc3339(t))")
        }
        #expect(Time90k.parse("2026-11-22T08:00:00.123456789Z") == Time90k.parse("2026-11-22T08:00:00Z")! + 11_111)
        #expect(Time90k.parse("2026-11-22T09:00:00.5+01:00") == Time90k.parse("2026-11-22T08:00:00Z")! + 45_000)
        for bad in [
            "2026-11-22T08:00:00.Z", "2026-11-22T08:00:00.1234567890Z", "2026-11-22T08:00:00.12x",
            "2026-11-22T08:00:00.-1Z",
        ] {
            #expect(Time90k.parse(bad) == nil, "\(bad)")
        }
        #expect(Time90k.rfc3339(-1) == "1969-12-31T23:59:59.999Z")
    }

    @Test func everyInt64FormatsWithoutTrapping() {
        #expect(Time90k.rfc3339(.min) == "-292277022-07-22T21:40:27.483Z" || Time90k.rfc3339(.min).hasPrefix("-"))
        #expect(Time90k.rfc3339(.max).hasPrefix("+"))
        #expect(Time90k.rfc3339(Time90k.supported.upperBound) == "9999-12-31T23:59:59.999Z")
        #expect(Time90k.rfc3339(Time90k.supported.upperBound + 90) == "+10000-01-01T00:00:00.000Z")
        for t: Int64 in [.min, .min + 1, .min + 89, -89, .max - 89, .max] {
            _ = Time90k.rfc3339(t)
            _ = Time90k.describeDuration(t)
        }
    }

    @Test func parseRefusesWhatIsOutsideTheSupportedYears() {
        #expect(Time90k.parseChecked("-9223372036854775808") == .failure(.outOfRange))
        #expect(Time90k.parseChecked("9223372036854775807") == .failure(.outOfRange))
        #expect(Time90k.parseChecked("99999999999999999999999") == .failure(.outOfRange))
        #expect(Time90k.parseChecked("-1") == .failure(.outOfRange))
        #expect(Time90k.parseChecked("1969-12-31T23:59:59Z") == .failure(.outOfRange))
        #expect(Time90k.parseChecked("0") == .success(0))
        #expect(Time90k.parse("9999-12-31T23:59:59.999Z").map { Time90k.supported.upperBound - $0 < 100 } == true)
        #expect(Time90k.parseChecked("10000-01-01T00:00:00Z") == .failure(.outOfRange))
        #expect(Time90k.parseChecked("2026-11-22") == .failure(.malformed))
        #expect(Time90k.parseChecked("") == .failure(.malformed))
        #expect(Time90k.parseChecked("+") == .failure(.malformed))
        #expect(Time90k.parseChecked(String(repeating: "1", count: 100)) == .failure(.malformed))
        #expect(Time90k.parse("1970-01-01T00:00:01Z") == 90_000)
        #expect(Time90k.parse("2026-11-22T09:00:00+01:00") == Time90k.parse("2026-11-22T08:00:00Z"))
    }

    @Test func saturatingArithmetic() {
        #expect(Time90k.add(.max, 1) == .max)
        #expect(Time90k.add(.min, -1) == .min)
        #expect(Time90k.subtract(.min, 86_400 * 90_000) == .min)
        #expect(Time90k.subtract(.max, -1) == .max)
        #expect(Time90k.length(Int64.min..<Int64.max) == .max)
        #expect(Time90k.length(5..<15) == 10)
        #expect(Time90k.ticks(seconds: .nan) == 0)
        #expect(Time90k.ticks(seconds: 1e300) == .max)
        #expect(Time90k.ticks(seconds: -.infinity) == .min)
        #expect(Time90k.ticks(seconds: 1.5) == 135_000)
    }
}
