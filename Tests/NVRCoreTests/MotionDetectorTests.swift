import Foundation
import NVRMedia
import NVRRecorder
import TestSupport
import Testing

@testable import NVRRecorder

/// The motion detector on encoded clips with known content (ffmpeg lavfi): a still grid, a
/// white square crossing its top from 2 s to 4 s, or the whole picture 40 % brighter from 2 s.
@Suite final class MotionDetectorTests {
    static let still = "color=c=0x505050:s=320x240:r=10,drawgrid=w=40:h=40:t=2:c=0x909090"

    /// Each test's clips go to a directory of its own, removed when the suite value goes.
    let dir = TestEnvironment.tempDir("motion")
    deinit { TestEnvironment.cleanup(dir) }

    func clip(_ name: String, _ args: [String]) throws -> String {
        let path = dir + "/\(name).mp4"
        let r = try runProcess(
            "/usr/bin/ffmpeg",
            ["-v", "error", "-y"] + args + ["-t", "6", "-c:v", "libx264", "-g", "10", "-bf", "0", path])
        #expect(r.status == 0, "\(r.stderr)")
        return path
    }

    var squareClip: String {
        get throws {
            try clip(
                "square",
                [
                    "-f", "lavfi", "-i", Self.still, "-f", "lavfi", "-i", "color=white:s=40x40:r=10",
                    "-filter_complex", "[0][1]overlay=x='if(between(t,2,4),(t-2)*120,-100)':y=20:eval=frame",
                ])
        }
    }

    /// What the detector reports over a whole clip, times in seconds from its start.
    func findings(_ path: String, _ settings: MotionSettings) throws -> [MotionDetector.Finding] {
        let d = try Demuxer(Demuxer.Options(url: path), interrupter: Interrupter())
        let stream = d.streams[0]
        let detector = try MotionDetector(stream: stream, settings: settings)
        var out: [MotionDetector.Finding] = []
        while true {
            do {
                try d.read { p in
                    guard p.stream == 0 else { return }
                    let t = p.dts * 90_000 * Int64(stream.timebaseNum) / Int64(stream.timebaseDen)
                    if let f = detector.feed(p.data, isKey: p.isKey, at: t) { out.append(f) }
                }
            } catch is MediaError { break }
        }
        if let f = detector.finish() { out.append(f) }
        return out.filter { if case .ongoing = $0 { false } else { true } }
    }

    func seconds(_ f: MotionDetector.Finding) -> Double {
        switch f {
        case .started(let t, _), .ongoing(let t, _), .ended(let t): Double(t) / 90_000
        }
    }

    @Test func aCrossingSquareIsOneEventAtTheRightTimes() throws {
        var s = MotionSettings()
        s.frames = .all
        let f = try findings(try squareClip, s)
        #expect(f.count == 2, "\(f)")
        guard f.count == 2, case .started = f[0], case .ended = f[1] else { return }
        #expect(abs(seconds(f[0]) - 2) <= 0.25 && abs(seconds(f[1]) - 4) <= 0.25, "\(f.map(seconds))")
        // Key frames only (one a second): within half a second.
        s.frames = .keyframes
        let k = try findings(try squareClip, s)
        #expect(k.count == 2, "\(k)")
        if k.count == 2 { #expect(abs(seconds(k[0]) - 2) <= 0.5 && abs(seconds(k[1]) - 4) <= 0.5, "\(k.map(seconds))") }
    }

    @Test func aMaskHidesTheSquare() throws {
        var s = MotionSettings()
        s.frames = .all
        s.masks = [[[0, 0], [1, 0], [1, 0.35], [0, 0.35]]]  // the top third, where the square runs
        #expect(try findings(try squareClip, s).isEmpty)
        s.masks = [[[0, 0.5], [1, 0.5], [1, 1], [0, 1]]]  // the bottom half: the square is still seen
        #expect(try findings(try squareClip, s).count == 2)
    }

    @Test func aLightChangeIsNotMotion() throws {
        let light = try clip(
            "light",
            ["-f", "lavfi", "-i", Self.still + ",format=gray,geq=lum='p(X,Y)*if(gt(T,2),1.4,1)',format=yuv420p"])
        for frames in [MotionSettings.Frames.all, .keyframes] {
            var s = MotionSettings()
            s.frames = frames
            #expect(try findings(light, s).isEmpty, "\(frames)")
        }
    }

    @Test func masksAreRasterizedByPixelCentres() {
        let m = MotionDetector.rasterize(masks: [[[0, 0], [0.5, 0], [0.5, 1], [0, 1]]], width: 4, height: 2)
        #expect(m == [false, false, true, true, false, false, true, true])
        // On the hypotenuse, outside by the even-odd rule.
        #expect(MotionDetector.inside(0.5, 0.5, [[0, 0], [1, 0], [0, 1]]) == false)
        #expect(MotionDetector.inside(0.2, 0.2, [[0, 0], [1, 0], [0, 1]]))
    }
}
