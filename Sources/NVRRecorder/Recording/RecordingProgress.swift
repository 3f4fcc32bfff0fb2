/// Whether what a camera sends is being recorded: its session says `streaming` only while it
/// is, and `stalled` while frames arrive but most of them cannot be recorded (timestamps that
/// jump back and forth, so every run ends before it starts; frames the segmenter refuses).
/// A camera that sends nothing at all is the frame watchdog's (it reconnects).
///
/// Fed from the camera's thread after each read with running totals; looks at them once a
/// second and judges the last `window` of them: no allocation, no lock. Times are the
/// session's monotonic nanoseconds, so tests drive it on simulated time.
struct RecordingProgress {
    static let window: UInt64 = 5_000_000_000
    static let sampleEvery: UInt64 = 1_000_000_000
    /// Samples kept: enough to span the window.
    private static let slots = Int(window / sampleEvery) + 1

    /// What was judged at the last sample.
    enum Verdict: Equatable {
        case recording
        /// Over the window, `dropped` of `received` frames could not be recorded.
        case stalled(received: Int64, dropped: Int64)
    }

    private var at = [UInt64](repeating: 0, count: slots)
    private var received = [Int64](repeating: 0, count: slots)
    private var dropped = [Int64](repeating: 0, count: slots)
    private var count = 0, next = 0
    private(set) var verdict = Verdict.recording

    init() {}

    /// Running totals at `now`: video frames received, and frames that could not be recorded.
    /// Returns the new verdict when it changed.
    mutating func update(now: UInt64, received r: Int64, dropped d: Int64) -> Verdict? {
        if count > 0 {
            let newest = (next + Self.slots - 1) % Self.slots
            guard now &- at[newest] >= Self.sampleEvery else { return nil }
        }
        at[next] = now
        received[next] = r
        dropped[next] = d
        next = (next + 1) % Self.slots
        count = min(count + 1, Self.slots)
        // The oldest sample at least `window` old, if there is one yet.
        var oldest: Int?
        for k in 0..<count {
            let i = (next + Self.slots - count + k) % Self.slots
            if now &- at[i] >= Self.window { oldest = i } else { break }
        }
        guard let o = oldest else { return nil }
        let got = r - received[o]
        let lost = d - dropped[o]
        let judged: Verdict = got > 0 && lost * 2 > got ? .stalled(received: got, dropped: lost) : .recording
        let changed: Bool
        switch (verdict, judged) {
        case (.recording, .recording), (.stalled, .stalled): changed = false
        default: changed = true
        }
        verdict = judged
        return changed ? judged : nil
    }
}
