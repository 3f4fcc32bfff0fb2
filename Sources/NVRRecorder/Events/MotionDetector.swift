import Foundation
import NVRMedia

/// Finds motion in a camera's live video: decodes some frames (key frames only, or all of
/// them looking a few times a second), shrinks each to a small grey image, and compares it
/// with a running background. A change counts when enough of the unmasked picture differs by
/// more than the sensitivity allows, after a global gain correction; a change over most of the
/// picture is a light change (lights, IR cut, clouds) and resets the background instead.
/// Reasons and defaults: design/motion.md.
public final class MotionDetector {
    /// What the detector saw; times are on the wall clock.
    public enum Finding: Equatable {
        case started(at: Int64, score: Double)
        case ongoing(at: Int64, score: Double)
        case ended(at: Int64)
    }

    public static let analysisWidth = 160
    /// Over this share of the picture changed at once, the change is light, not motion.
    static let lightChangeFraction = 0.6
    /// How long, after a light change, motion is not believed (P-frames settle).
    static let lightHold90k: Int64 = 90_000
    /// Background time constants: quiet pixels follow the scene within ~10 s; pixels that
    /// differ are absorbed slowly (a parked car becomes background after a few minutes).
    static let tauQuiet = 10.0, tauChanged = 120.0

    public let settings: MotionSettings
    private let stream: StreamDescription
    public let keyFramesOnly: Bool
    private let interval90k: Int64
    private let quiet90k: Int64
    private let threshold: Float
    private let minChanged: Int
    /// Made at the first key frame (which may carry the parameter sets).
    private var decoder: VideoDecoder?
    private let scaler: GreyScaler
    private var grey: [UInt8]
    private var background: [Float] = []
    private var analysed: [Bool]
    private let analysedCount: Int
    /// When the previous look was (its picture is in the background now).
    private var lastLook90k: Int64?
    /// Which analysis pixels differ from the background in the newest look.
    private var changedMask: [Bool] = []
    private var sawKey = false
    private var lightUntil90k: Int64 = .min
    // Event state.
    private var inMotion = false
    private var streak = 0
    private var streakStart90k: Int64 = 0
    private var previousStill90k: Int64?
    private var lastMotion90k: Int64 = 0
    private var firstStillAfter90k: Int64?
    private var failures = 0
    /// Called after each look with the decoded picture (borrowed for the call), where the
    /// motion is (the changed pixels' bounding box, normalised; nil when nothing moved) and the
    /// time: object detection looks there (ObjectDetection).
    public var onLook: ((Picture, MotionRegion?, Int64) -> Void)?
    /// Told each look while someone watches it (the page's motion overlay).
    public var monitor: MotionMonitor?
    /// The changed share of the newest look.
    private var lastChanged = 0.0

    /// Frames in a row that must show motion before an event starts.
    private var minFrames: Int { keyFramesOnly ? 1 : 2 }

    public init(stream: StreamDescription, settings: MotionSettings) throws {
        guard stream.codec.isVideo, stream.width > 0, stream.height > 0 else {
            throw MediaError(.unsupported, "motion detection needs a video stream with a known size")
        }
        // The analysis picture keeps the aspect ratio: a stream that says 16×2147483647 must
        // not make it gigabytes.
        let (w, h) = (Int(stream.width), Int(stream.height))
        guard w <= 16_384, h <= 16_384, max(w, h) <= 16 * min(w, h) else {
            throw MediaError(.unsupported, "motion detection cannot look at a \(w)x\(h) picture")
        }
        self.settings = settings
        self.stream = stream
        let pixels = Int(stream.width) * Int(stream.height)
        keyFramesOnly = settings.frames == .keyframes || (settings.frames == .auto && pixels > 500_000)
        interval90k = Int64(90_000 / settings.fps)
        threshold = Float(4 + Double(100 - settings.sensitivity) * 0.4)
        let size = GreyScaler.size(
            forWidth: Int(stream.width), height: Int(stream.height), maxWidth: Self.analysisWidth)
        scaler = GreyScaler(width: size.width, height: size.height)
        grey = [UInt8](repeating: 0, count: size.width * size.height)
        analysed = Self.rasterize(masks: settings.masks, width: size.width, height: size.height)
        analysedCount = max(analysed.filter { $0 }.count, 1)
        minChanged = max(1, Int((Double(analysedCount) * settings.minArea / 100).rounded(.up)))
        let look = keyFramesOnly ? 0 : interval90k
        quiet90k = max(Int64(settings.quietSeconds * 90_000), 2 * look)
    }

    /// A decoder configured the way the packets frame their NAL units: Annex B packets carry
    /// or follow Annex B parameter sets; length-prefixed ones need an avcC/hvcC, built as the
    /// segment writer builds it (from the key frame when the stream has none out of band).
    static func makeDecoder(_ stream: StreamDescription, keyFrame: UnsafeRawBufferPointer) throws -> VideoDecoder {
        if stream.isAnnexB {
            return try VideoDecoder(codec: stream.codec, extradata: stream.extradata.first == 1 ? [] : stream.extradata)
        }
        if stream.extradata.first == 1 { return try VideoDecoder(codec: stream.codec, extradata: stream.extradata) }
        var s = stream
        if s.extradata.isEmpty {
            s.extradata = ParameterSets.annexB(from: keyFrame, codec: s.codec, lengthPrefixed: true)
        }
        guard let entry = try InitSegment.make(streams: [s]).tracks.first?.sampleEntry else {
            throw MediaError(.unsupported, "no \(s.codec.rawValue) parameter sets to decode with")
        }
        return try VideoDecoder(sampleEntry: entry)
    }

    /// Which analysis pixels count: those whose centre is outside every mask polygon.
    static func rasterize(masks: [[[Double]]], width: Int, height: Int) -> [Bool] {
        var out = [Bool](repeating: true, count: width * height)
        guard !masks.isEmpty else { return out }
        for y in 0..<height {
            for x in 0..<width {
                let px = (Double(x) + 0.5) / Double(width)
                let py = (Double(y) + 0.5) / Double(height)
                if masks.contains(where: { inside(px, py, $0) }) { out[y * width + x] = false }
            }
        }
        return out
    }

    /// Even-odd rule point-in-polygon test.
    static func inside(_ x: Double, _ y: Double, _ poly: [[Double]]) -> Bool {
        var c = false
        var j = poly.count - 1
        for i in 0..<poly.count {
            let (xi, yi, xj, yj) = (poly[i][0], poly[i][1], poly[j][0], poly[j][1])
            if (yi > y) != (yj > y) && x < (xj - xi) * (y - yi) / (yj - yi) + xi { c.toggle() }
            j = i
        }
        return c
    }

    /// Feeds one video packet captured at `t` (wall clock). Returns what changed, if anything.
    public func feed(_ data: UnsafeRawBufferPointer, isKey: Bool, at t: Int64) -> Finding? {
        if isKey { sawKey = true }
        guard sawKey, isKey || !keyFramesOnly else { return nil }
        let picture: Picture?
        do {
            if decoder == nil { decoder = try Self.makeDecoder(stream, keyFrame: data) }
            picture = try decoder!.decode(packet: data, isKey: isKey)
        } catch {
            failures += 1
            sawKey = false  // wait for the next key frame to decode cleanly again
            return nil
        }
        guard let picture else { return nil }
        if !keyFramesOnly, let last = lastLook90k, t - last < interval90k - interval90k / 4 { return nil }
        do { try grey.withUnsafeMutableBufferPointer { try scaler.scale(picture, into: $0.baseAddress!) } } catch {
            return nil
        }
        let finding = analyse(at: t)
        if let onLook { onLook(picture, inMotion ? region() : nil, t) }
        if let monitor, monitor.isWatched {
            monitor.publish(
                .init(
                    time90k: t, changed: lastChanged, threshold: Double(minChanged) / Double(max(analysedCount, 1)),
                    inMotion: inMotion, region: region()))
        }
        return finding
    }

    /// Decoding failures so far (the session reports them, once).
    public var decodeFailures: Int { failures }

    /// Compares the newest grey image with the background and updates both.
    func analyse(at t: Int64) -> Finding? {
        let n = grey.count
        let dt = Double(max(t - (lastLook90k ?? t), 0)) / 90_000
        lastLook90k = t
        if background.isEmpty {
            background = grey.map { Float($0) }
            previousStill90k = t
            return nil
        }
        // Gain: a light change scales every pixel alike; motion changes a part of the picture.
        var sumF: Float = 0
        var sumB: Float = 0
        for i in 0..<n where analysed[i] {
            sumF += Float(grey[i])
            sumB += background[i]
        }
        let gain = sumB > 0 ? min(max(sumF / sumB, 0.25), 4) : 1
        var changed = 0
        if changedMask.count != n { changedMask = [Bool](repeating: false, count: n) }
        for i in 0..<n {
            let d = abs(Float(grey[i]) - gain * background[i])
            let c = analysed[i] && d > threshold
            changedMask[i] = c  // in place: no copy per look
            if c { changed += 1 }
        }
        let fraction = Double(changed) / Double(analysedCount)
        lastChanged = fraction
        if fraction > Self.lightChangeFraction {
            // Light, not motion: start the background again from this picture.
            for i in 0..<n { background[i] = Float(grey[i]) }
            lightUntil90k = t + Self.lightHold90k
            return step(motion: false, score: 0, at: t)
        }
        let aQuiet = Float(1 - exp(-dt / Self.tauQuiet))
        let aChanged = Float(1 - exp(-dt / Self.tauChanged))
        for i in 0..<n {
            let a = changedMask[i] ? aChanged : aQuiet
            background[i] += a * (Float(grey[i]) - background[i])
        }
        let motion = changed >= minChanged && t >= lightUntil90k
        return step(motion: motion, score: fraction, at: t)
    }

    /// The bounding box of the pixels that differ in the newest look, normalised.
    func region() -> MotionRegion? {
        let w = scaler.width
        let h = scaler.height
        guard changedMask.count == w * h else { return nil }
        var (x0, y0, x1, y1) = (w, h, -1, -1)
        for y in 0..<h {
            for x in 0..<w where changedMask[y * w + x] {
                x0 = min(x0, x)
                x1 = max(x1, x)
                y0 = min(y0, y)
                y1 = max(y1, y)
            }
        }
        guard x1 >= x0, y1 >= y0 else { return nil }
        return MotionRegion(
            x: Double(x0) / Double(w), y: Double(y0) / Double(h), width: Double(x1 - x0 + 1) / Double(w),
            height: Double(y1 - y0 + 1) / Double(h))
    }

    /// The event state machine: start after `minFrames` frames with motion, end after `quiet`
    /// without. Start and end are put halfway between the frames that saw the change, the
    /// best guess of when it happened between two looks.
    private func step(motion: Bool, score: Double, at t: Int64) -> Finding? {
        if motion {
            firstStillAfter90k = nil
            lastMotion90k = t
            if inMotion { return .ongoing(at: t, score: score) }
            if streak == 0 { streakStart90k = previousStill90k.map { ($0 + t) / 2 } ?? t }
            streak += 1
            guard streak >= minFrames else { return nil }
            inMotion = true
            streak = 0
            return .started(at: streakStart90k, score: score)
        }
        streak = 0
        previousStill90k = t
        guard inMotion else { return nil }
        if firstStillAfter90k == nil { firstStillAfter90k = t }
        guard t - lastMotion90k >= quiet90k else { return nil }
        inMotion = false
        return .ended(at: (lastMotion90k + firstStillAfter90k!) / 2)
    }

    /// Ends a motion in progress (the stream stopped): at the last frame that showed it.
    public func finish() -> Finding? {
        guard inMotion else { return nil }
        inMotion = false
        return .ended(at: lastMotion90k)
    }
}

/// Where motion is in a picture: normalised, 0…1 from the top left.
public struct MotionRegion: Sendable, Equatable {
    public var x, y, width, height: Double
}
