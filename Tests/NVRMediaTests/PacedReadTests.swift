import Testing

@testable import NVRMedia

/// How long a paced reader waits between reads: the pacing interval for a light stream, less for
/// a heavy one, so that about `paceLimit` bytes at most wait in the kernel.
@Suite struct PacedReadTests {
    let ms: UInt64 = 1_000_000

    @Test func aLightStreamWaitsTheWholeInterval() {
        // 4 Mbit/s: 50 KB came in over 100 ms; 64 KB would take 128 ms.
        #expect(BufferedSocket.pacedWait(interval: 100 * ms, bytes: 50_000, span: 100 * ms) == 100 * ms)
    }

    @Test func aHeavyStreamWaitsOnlyUntilTheLimitWouldArrive() {
        // 16 Mbit/s: 200 KB in 100 ms; 64 KiB comes in 32.8 ms.
        let wait = BufferedSocket.pacedWait(interval: 100 * ms, bytes: 200_000, span: 100 * ms)
        #expect(wait == UInt64(65_536) * 100 * ms / 200_000)
        #expect(wait > 32 * ms && wait < 33 * ms)
    }

    @Test func nothingKnownYetWaitsTheInterval() {
        #expect(BufferedSocket.pacedWait(interval: 100 * ms, bytes: 0, span: 100 * ms) == 100 * ms)
        #expect(BufferedSocket.pacedWait(interval: 100 * ms, bytes: 1000, span: 0) == 100 * ms)
        // The first read: its span is the time since boot, too long to multiply.
        #expect(BufferedSocket.pacedWait(interval: 100 * ms, bytes: 1000, span: .max / 2) == 100 * ms)
    }
}
