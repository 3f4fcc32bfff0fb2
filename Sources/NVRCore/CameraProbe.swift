import Foundation
import NVRMedia

/// What `nvr camera probe` reports about a live stream.
public struct ProbeResult: Sendable, Codable {
    public var url: String
    public var video: String
    public var codec: String
    public var width: Int
    public var height: Int
    public var fps: Double?
    public var bitRate: Int64?
    public var audio: String?
}

public enum CameraProbe {
    /// Opens the stream, reads a few seconds to measure bit rate and frame rate, and closes it.
    public static func probe(source: LiveSource, seconds: Double = 2, timeout: Double = 10) throws -> ProbeResult {
        MediaLog.configure(environment: ProcessInfo.processInfo.environment)
        let interrupter = Interrupter()
        let d = try Demuxer(Demuxer.Options(url: source.url, format: source.format, avOptions: source.options ?? [:],
                                            timeoutSeconds: timeout), interrupter: interrupter)
        defer { d.close() }
        let v = d.streams[0].description
        // Measure what actually arrives: bytes and frames over `seconds` of video time.
        var bytes = 0, frames = 0
        var first: Int64?, last: Int64 = 0
        let tb = Double(v.timebaseNum) / Double(max(v.timebaseDen, 1))
        let started = Date()
        while Date().timeIntervalSince(started) < seconds + timeout {
            guard let i = try? d.read() else { break }
            let p = d.packet.pointee
            bytes += Int(p.size)
            let t = p.dts != Int64.min ? p.dts : p.pts
            guard i == 0, t != Int64.min else { continue }
            frames += 1
            if first == nil { first = t }
            last = t
            if Double(last - (first ?? last)) * tb >= seconds { break }
        }
        let span = Double(last - (first ?? last)) * tb
        let fps = span > 0 ? Double(frames - 1) / span : (d.frameRate > 0 ? d.frameRate : nil)
        let rate = span > 0 ? Int64(Double(bytes * 8) / span) : (d.bitRate > 0 ? d.bitRate : nil)
        return ProbeResult(url: Demuxer.redact(source.url), video: v.summary, codec: v.codec.rawValue,
                           width: Int(v.width), height: Int(v.height), fps: fps, bitRate: rate,
                           audio: d.streams.count > 1 ? d.streams[1].description.summary : nil)
    }
}
