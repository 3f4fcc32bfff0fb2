import Foundation

/// What a camera's speaker would have played: the G.711 bytes a back-channel received, decoded
/// by ffmpeg (not by the NVR's own code), and the tone in them found by counting zero
/// crossings of the loud part.
public struct HeardTone: Sendable, CustomStringConvertible {
    /// Seconds of audio, and of audio louder than silence.
    public var seconds: Double
    public var loudSeconds: Double
    /// The loud part's frequency, from its zero crossings.
    public var hertz: Double

    public var description: String {
        String(format: "%.2f s of audio, %.2f s loud, %.1f Hz", seconds, loudSeconds, hertz)
    }

    /// `codec`: "pcmu" or "pcma"; `rate`: the file's sample rate.
    public init(file: String, codec: String, rate: Int = 8000) throws {
        let r = try runProcess(
            "/usr/bin/ffmpeg",
            [
                "-v", "error", "-f", codec == "pcma" ? "alaw" : "mulaw", "-ar", String(rate), "-ac", "1", "-i", file,
                "-f", "s16le", "-acodec", "pcm_s16le", "-y", file + ".s16",
            ])
        guard r.status == 0 else { throw FixtureError("ffmpeg could not decode \(file): \(r.stderr)") }
        let data = try Data(contentsOf: URL(fileURLWithPath: file + ".s16"))
        let samples: [Int16] = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        seconds = Double(samples.count) / Double(rate)
        // Loud: in 20 ms windows whose RMS is over 1 % of full scale.
        let window = rate / 50
        var loud: [Int16] = []
        var at = 0
        while at + window <= samples.count {
            let w = samples[at..<(at + window)]
            let rms = (w.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(window)).squareRoot()
            if rms > 327 { loud += w }
            at += window
        }
        loudSeconds = Double(loud.count) / Double(rate)
        // Crossings with a little hysteresis, so noise around zero is not counted.
        var crossings = 0
        var positive: Bool?
        for s in loud {
            if s > 200, positive != true {
                if positive == false { crossings += 1 }
                positive = true
            } else if s < -200, positive != false {
                if positive == true { crossings += 1 }
                positive = false
            }
        }
        hertz = loudSeconds > 0 ? Double(crossings) / 2 / loudSeconds : 0
    }
}
