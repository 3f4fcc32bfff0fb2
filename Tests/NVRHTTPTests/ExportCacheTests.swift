import Foundation
import NVRIndex
import NVRPlayback
import Synchronization
import TestSupport
import Testing

@testable import NVRHTTP

/// The export a HEAD built is the one its GET sends: builds are kept for their time to live.
@Suite struct ExportCacheTests {
    @Test func aBuildIsKeptForItsTimeToLiveThenMadeAgain() throws {
        let h = try RecorderHarness()
        let start = Time90k.now() - 3600 * 90_000
        let clip = h.root + "/a.ts"
        try RecorderHarness.makeClip(clip, seconds: 10)
        let cam = try h.record([clip], as: "cam", start90k: start)
        let range = start..<(start + 60 * 90_000)
        let now = Mutex(0.0)
        let cache = ExportCache(ttl: 10, clock: { now.withLock { $0 } })
        let first = try cache.export(
            index: h.index, storage: h.recorder.storage, cameras: [cam], range: range, speed: nil)
        #expect(abs(first.files[0].result.mp4.duration90k - 10 * 90_000) < 9_000)

        // Ten more seconds recorded in the range: within the time to live the build is the same…
        try h.record([clip], as: "cam", start90k: start + 20 * 90_000)
        let again = try cache.export(
            index: h.index, storage: h.recorder.storage, cameras: [cam], range: range, speed: nil)
        #expect(again.archive.size == first.archive.size)
        #expect(again.files[0].result.mp4.duration90k == first.files[0].result.mp4.duration90k)
        // …and after it, made again with the new footage.
        now.withLock { $0 = 10.5 }
        let later = try cache.export(
            index: h.index, storage: h.recorder.storage, cameras: [cam], range: range, speed: nil)
        #expect(
            abs(later.files[0].result.mp4.duration90k - 30 * 90_000) < 9_000, "\(later.files[0].result.mp4.duration90k)"
        )
    }
}
