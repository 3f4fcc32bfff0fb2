import Foundation
import NVRMedia
import NVRPluginHost
import NVRRecorder
import NVRTime

public enum CameraProbe {
    /// Opens the stream, reads a few seconds to measure bit rate and frame rate, and closes it.
    public static func probe(source: LiveSource, seconds: Double = 2, timeout: Double = 10) throws -> ProbeResult {
        MediaLog.configure(environment: ProcessInfo.processInfo.environment)
        let interrupter = Interrupter()
        let input = try LiveInputs.open(source, timeout: timeout, interrupter: interrupter)
        defer { input.close() }
        guard let v = input.streams.first else { throw MediaError(.unsupported, "no video stream") }
        // Measure what actually arrives: bytes and frames over `seconds` of video time.
        var bytes = 0
        var frames = 0
        var first: Int64?
        var last: Int64 = 0
        let tb = Double(v.timebaseNum) / Double(max(v.timebaseDen, 1))
        let started = Date()
        reading: while Date().timeIntervalSince(started) < seconds + timeout {
            var done = false
            do {
                try input.read { p in
                    bytes += p.data.count
                    let t = p.dts != Int64.min ? p.dts : p.pts
                    guard p.stream == 0, t != Int64.min else { return }
                    frames += 1
                    if first == nil { first = t }
                    last = t
                    if Double(Time90k.subtract(last, first ?? last)) * tb >= seconds { done = true }
                }
            } catch { break reading }
            if done { break }
        }
        let span = Double(Time90k.subtract(last, first ?? last)) * tb
        // A span from timestamps that jump (or a time base far too fine) gives no figure.
        let fps = span > 0 ? Double(frames - 1) / span : (input.frameRate > 0 ? input.frameRate : nil)
        let measured = span > 0 ? Int64(exactly: (Double(bytes) * 8 / span).rounded()) : nil
        let rate = measured ?? (input.bitRate > 0 ? input.bitRate : nil)
        return ProbeResult(
            url: Demuxer.redact(source.url), video: v.summary, codec: v.codec.rawValue,
            width: Int(v.width), height: Int(v.height), fps: fps, bitRate: rate,
            audio: input.streams.count > 1 ? input.streams[1].summary : nil,
            notes: input.notes.isEmpty ? nil : input.notes)
    }
}
