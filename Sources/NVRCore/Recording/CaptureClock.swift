/// When a live stream's frames were captured, on the wall clock: the media time since the
/// stream began, anchored where (arrival − media time) is lowest — packets reach us late
/// (buffering, network), never early. A timestamp jump (back, or over 5 s forward) anchors
/// again.
struct CaptureClock {
    private var base90k: Int64?
    private var last90k: Int64 = 0

    mutating func reset() { base90k = nil }

    /// The capture time of a frame with media time `t` (90 kHz) that arrived at `arrival`.
    /// `jumped` is set when the clock had to anchor again.
    /// Saturating arithmetic throughout: media times come from cameras and plugins.
    mutating func wallTime(media t: Int64, arrival: Int64, jumped: inout Bool) -> Int64 {
        let anchor = Time90k.subtract(arrival, t)
        let base: Int64
        if let b = base90k, t >= last90k, Time90k.subtract(t, last90k) <= 5 * 90_000 {
            base = min(b, anchor)
        } else {
            base = anchor
            jumped = true
        }
        base90k = base
        last90k = t
        return Time90k.add(base, t)
    }
}
