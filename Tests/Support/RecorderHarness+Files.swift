import Foundation
import NVRIndex
import NVRMedia
import NVRRecorder
import NVRTime

extension RecorderHarness {
    /// Records encoded files as one camera connection, straight into the segmenter (no camera
    /// in between, nothing waits for the wall clock): every packet of `files` in order, with
    /// continuous timestamps from `start90k` (each file's first packet at its start) (a short pause between files). Five minutes of
    /// footage take as long as reading it.
    @discardableResult
    public func record(
        _ files: [String], as name: String, start90k: Int64 = Time90k.now(), segmentSeconds: Int = 60
    ) throws -> CameraRecord {
        let cam =
            try index.camera(named: name)
            ?? index.addCamera(CameraRecord(name: name, plugin: "demo", config: "{}", created90k: 0))
        let seg = Segmenter(
            camera: cam, storage: recorder.storage, writer: recorder.writer,
            settings: .init(segmentSeconds: segmentSeconds), logger: TestEnvironment.logger)
        var offset: Int64 = 0
        var began = false
        for f in files {
            let d = try Demuxer(Demuxer.Options(url: f), interrupter: Interrupter())
            if !began {
                try seg.begin(streams: d.streams)
                began = true
            }
            let tb = d.streams[0]
            var zero: Int64?
            var last: Int64 = 0
            while true {
                do {
                    try d.read { p in
                        // The first packet is at start90k (an MPEG-TS file starts at 1.4 s).
                        let raw = p.dts * 90_000 * Int64(tb.timebaseNum) / Int64(tb.timebaseDen)
                        let t = raw - (zero ?? raw)
                        if zero == nil { zero = raw }
                        last = max(last, t)
                        try seg.append(
                            stream: 0, pts: t + offset, dts: t + offset, duration: 0, isKey: p.isKey, data: p.data,
                            capture90k: start90k + t + offset)
                    }
                } catch { break }
            }
            offset += last + 3600
        }
        try seg.end()
        recorder.writer.flush()
        return cam
    }

    /// A test pattern encoded with libx264 (no B-frames) into `path`.
    /// A key frame every `gopFrames` frames, exactly.
    public static func makeClip(
        _ path: String, seconds: Int, size: String = "160x120", rate: Int = 10, gopFrames: Int = 20,
        pattern: String = "testsrc", preset: String = "ultrafast"
    ) throws {
        let r = try runProcess(
            "/usr/bin/ffmpeg",
            [
                "-v", "error", "-f", "lavfi", "-i", "\(pattern)=size=\(size):rate=\(rate)", "-t", String(seconds),
                "-c:v", "libx264", "-preset", preset, "-g", String(gopFrames), "-keyint_min", String(gopFrames),
                "-sc_threshold", "0", "-bf", "0", path,
            ])
        guard r.status == 0 else { throw FixtureError("ffmpeg could not make \(path): \(r.stderr)") }
    }
}
