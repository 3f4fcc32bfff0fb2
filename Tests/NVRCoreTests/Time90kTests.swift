import Foundation
import Testing
@testable import NVRCore

struct Time90kTests {
    @Test func rfc3339MatchesFoundationAndRoundTrips() throws {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var rng = SystemRandomNumberGenerator()
        // Millisecond-aligned times from 1901 to 2400, leap days and epoch edges included.
        var samples: [Int64] = [0, -90, 90, 951_782_400_000 * 90, 4_107_542_400_000 * 90, -2_208_988_800_000 * 90]
        for _ in 0..<2000 { samples.append(Int64.random(in: -2_000_000_000_000...13_000_000_000_000, using: &rng) * 90) }
        for t in samples {
            let ours = Time90k.rfc3339(t)
            #expect(ours == f.string(from: Date(timeIntervalSince1970: Double(t / 90) / 1000)), "\(t)")
            #expect(Time90k.parse(ours) == t)
        }
        #expect(Time90k.rfc3339(Time90k.parse("2024-02-29T23:59:59.999Z")!) == "2024-02-29T23:59:59.999Z")
        #expect(Time90k.rfc3339(89) == "1970-01-01T00:00:00.000Z") // truncated, not rounded
    }
}
