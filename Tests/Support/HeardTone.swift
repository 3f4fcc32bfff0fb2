import Foundation

/// What a camera's speaker would have played: the G.711 bytes a back-channel received, decoded
/// by ffmpeg (not by the NVR's own code), and the tone in them: the median frequency of its
/// loud 100 ms windows, each by its zero crossings.
public struct HeardTone: Sendable, CustomStringConvertible {
    /// Seconds of audio, and of audio louder than silence.
    public var seconds: Double
    public var loudSeconds: Double
    /// The loud part's frequency, from its zero crossings.
    public var hertz: Double

    public var description: String {
        String(format: "%.2f s of audio, %.2f s loud, %.1f Hz", seconds, loudSeconds, hertz)
    }

    /// `codec`: "pcmu" or "pcma" (raw, at `rate`), or "aac" (ADTS, resampled to `rate`).
    public init(file: String, codec: String, rate: Int = 8000) throws {
        let input =
            codec == "aac"
            ? ["-f", "aac", "-i", file]
            : ["-f", codec == "pcma" ? "alaw" : "mulaw", "-ar", String(rate), "-ac", "1", "-i", file]
        let r = try runProcess(
            "/usr/bin/ffmpeg",
            ["-v", "error"] + input + [
                "-ac", "1", "-ar", String(rate), "-f", "s16le", "-acodec", "pcm_s16le", "-y", file + ".s16",
            ])
        guard r.status == 0 else { throw FixtureError("ffmpeg could not decode \(file): \(r.stderr)") }
        let data = try Data(contentsOf: URL(fileURLWithPath: file + ".s16"))
        let samples: [Int16] = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        seconds = Double(samples.count) / Double(rate)
        // In 100 ms windows: the loud ones (RMS over 1 % of full scale), each one's frequency by
        // its zero crossings (with a little hysteresis, so noise around zero is not counted),
        // and the median of those: a window with a dropout (a starved capture on a loaded
        // machine) does not move it.
        let window = rate / 10
        var loud = 0
        var perWindow: [Double] = []
        var at = 0
        while at + window <= samples.count {
            let w = samples[at..<(at + window)]
            at += window
            let rms = (w.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(window)).squareRoot()
            guard rms > 327 else { continue }
            loud += window
            // Half-periods between the first crossing and the last, over the time between them.
            var crossings: [Int] = []
            var positive: Bool?
            for (i, s) in w.enumerated() {
                if s > 200, positive != true {
                    if positive == false { crossings.append(i) }
                    positive = true
                } else if s < -200, positive != false {
                    if positive == true { crossings.append(i) }
                    positive = false
                }
            }
            if let f = crossings.first, let l = crossings.last, l > f {
                perWindow.append(Double(crossings.count - 1) / 2 / (Double(l - f) / Double(rate)))
            }
        }
        loudSeconds = Double(loud) / Double(rate)
        perWindow.sort()
        hertz = perWindow.isEmpty ? 0 : perWindow[perWindow.count / 2]
    }
}
