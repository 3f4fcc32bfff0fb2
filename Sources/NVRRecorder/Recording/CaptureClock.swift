import NVRTime

/// When a live stream's frames were captured, on the wall clock. Computed once per packet
/// where packets enter (the recording gate for the main stream, the sub-stream reader for
/// the sub-stream) and carried with the packet from there: the pre-roll buffer, the motion
/// detector, the event tracker and the segmenter (a segment starts at its first frame's
/// capture time) all use that one value.
///
/// capture time = base + media time. Packets reach us late (libavformat buffers what it read
/// while probing the stream, a network holds packets back), never early, so:
/// - while the clock settles (the first `settle90k` of media time after it anchors), base is
///   the lowest (arrival − media time) seen — the least-delayed packet so far;
/// - after that, base moves toward the lowest (arrival − media time) of each `window90k` of
///   media time by at most 500 ppm of that window, so a camera clock that runs fast or slow
///   is followed without steps, and a burst of late packets cannot move it at all.
/// A timestamp jump (back, or over 5 s forward) anchors it again (and it settles again).
struct CaptureClock {
    /// The fastest the clock follows the wall clock after settling: 500 ppm (45 ticks per
    /// 90,000), far beyond a crystal's drift, far below anything a viewer notices.
    static let maxSlewPPM: Int64 = 500
    /// Largest forward step of media time that is still the same stream.
    static let maxStep90k: Int64 = 5 * 90_000

    /// How long base may still step back to the least-delayed packet. The recording gate sets
    /// it to the segment length: the settling then ends inside a run's first segment, whose
    /// start the segmenter refines, so no segment boundary is ever moved after it is written.
    let settle90k: Int64
    let window90k: Int64

    private var base90k: Int64?
    private var last90k: Int64 = 0
    private var anchored90k: Int64 = 0
    private var windowStart90k: Int64 = 0
    private var windowLowest90k = Int64.max

    init(settle90k: Int64 = 10 * 90_000, window90k: Int64 = 10 * 90_000) {
        self.settle90k = max(settle90k, 0)
        self.window90k = max(window90k, 90_000)
    }

    mutating func reset() { base90k = nil }

    /// The capture time of a frame with media time `t` (90 kHz) that arrived at `arrival`.
    /// `jumped` is set when the clock had to anchor again.
    /// Saturating arithmetic throughout: media times come from cameras and plugins.
    mutating func wallTime(media t: Int64, arrival: Int64, jumped: inout Bool) -> Int64 {
        let anchor = Time90k.subtract(arrival, t)
        guard let b = base90k, t >= last90k, Time90k.subtract(t, last90k) <= Self.maxStep90k else {
            base90k = anchor
            last90k = t
            anchored90k = t
            windowStart90k = t
            windowLowest90k = .max
            jumped = true
            return Time90k.add(anchor, t)
        }
        last90k = t
        var base = b
        if Time90k.subtract(t, anchored90k) < settle90k {
            base = min(b, anchor)
            windowStart90k = t
        } else {
            windowLowest90k = min(windowLowest90k, anchor)
            let elapsed = Time90k.subtract(t, windowStart90k)
            if elapsed >= window90k {
                let allowed = elapsed / 1_000_000 * Self.maxSlewPPM + elapsed % 1_000_000 * Self.maxSlewPPM / 1_000_000
                base = Time90k.add(b, min(max(Time90k.subtract(windowLowest90k, b), -allowed), allowed))
                windowStart90k = t
                windowLowest90k = .max
            }
        }
        base90k = base
        return Time90k.add(base, t)
    }
}
