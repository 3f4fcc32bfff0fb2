import Foundation
import Logging
import NVRIndex
import NVRMedia
import NVRPlayback
import NVRStorage
import NVRTime
import Synchronization

/// Turns one camera's packets into segment files and index rows.
///
/// A run starts at the first key frame after `begin`; a segment is cut at the first key
/// frame after `segmentSeconds`; a fragment is written at every key frame and at least
/// once a second. A timestamp jump ends the run and starts a new one. Rows go to the index
/// through the `IndexWriter` (run ids and sample entries too): the segmenter never reads or
/// writes SQLite (design/crash-safety.md says when it can wait for the writer). Not
/// thread-safe: one producer (the session thread, or the plugin's push thread) at a time.
public final class Segmenter {
    let camera: CameraRecord
    let cameraID: Int64
    let storage: StorageLayout
    let writer: IndexWriter
    let settings: Settings
    let logger: Logger

    // The streams of the current connection.
    var streams: [StreamDescription] = []
    private var timebases: [Timebase] = []
    /// Cached per connection: whether video arrives with start codes (checked per packet).
    private var videoIsAnnexB = false
    /// The last in-band parameter sets seen at a key frame (to notice a resolution change).
    private var inbandParameterSets: [UInt8] = []
    var initSegment: InitSegment?
    /// The sample entries of the streams (video, then audio): known to the index, or pending.
    var entries: [PendingRowID] = []

    // The current run.
    var runID: Int64 = 0
    var runSeq = 0
    var runActive = false
    /// Why the last run ended early (frames then wait for a key frame), and why the last
    /// frame was refused: the camera's status says it when most frames are (RecordingProgress).
    private var runEnd: DroppedFrames.RunEnd?
    public private(set) var lastDropped: DroppedFrames?
    /// Video frames refused since the session began, but for those before a camera's first
    /// key frame (every connection starts mid-GOP): what RecordingProgress judges by. Read on
    /// the camera's thread, the one that appends.
    public private(set) var videoFramesRefused: Int64 = 0

    // The current segment.
    var file: FragmentedMP4Writer?
    var segment: SegmentRecord?
    /// The open segment's row as the index writer will know it.
    var segmentRef: PendingRowID?
    var segmentFirstDTS: Int64 = 0
    var videoFrames: [FrameIndex.Frame] = []
    var audioFrames: [FrameIndex.Frame] = []
    var fragments: [FrameIndex.Fragment] = []
    /// Where audio starts, relative to the segment's start.
    var audioOffset90k: Int64?
    var keyFrames = 0
    var fragmentStartDTS: Int64 = 0
    var lastVideoDTS: Int64 = 0
    /// Audio that came ahead of the video, until the video reaches it.
    var heldAudio = AudioHoldback()
    var lastVideoDuration: Int64 = 0
    var pendingVideo = false
    var pendingVideoKey = false
    var pendingVideoCTS: Int32 = 0
    var nextAudioTime: UInt64 = 0
    var lastProgressDTS: Int64 = 0
    var videoDuration90k: Int64 = 0

    /// Set while footage belongs to an event clip: the segment being written is marked, so
    /// retention keeps it as event footage.
    public var eventActive = false
    /// True while a run is being written.
    public var isRecording: Bool { runActive }
    /// When the packet being appended was captured (see append's `capture90k`).
    var capture90k: Int64 = 0
    /// The segment length: the recording gate lets its capture clock settle this long.
    public var segmentLength90k: Int64 { Int64(settings.segmentSeconds) * 90_000 }

    /// Called once each completed segment's row is committed (for tests and status), on the
    /// index writer's callback queue.
    public var onSegmentComplete: (@Sendable (SegmentRecord) -> Void)?
    /// Totals for /metrics (dropped frames, segments).
    public var counters = CameraCounters()
    /// Called when a file write fails because the disk is full; returns true if space was
    /// freed, and the write is tried once more. Recording never stops just because the disk
    /// filled. (The recorder's retention thread does the deleting.)
    public var onNoSpace: (() -> Bool)?
    /// Wall-clock time of the newest frame recorded (read by other threads for status).
    public var lastFrame90k: Int64? {
        let v = lastFrame.load(ordering: .relaxed)
        return v == .min ? nil : v
    }
    private let lastFrame = Atomic<Int64>(.min)

    public init(camera: CameraRecord, storage: StorageLayout, writer: IndexWriter, settings: Settings, logger: Logger) {
        self.camera = camera
        self.cameraID = camera.id ?? 0
        self.storage = storage
        self.writer = writer
        self.settings = settings
        self.logger = logger
        videoFrames.reserveCapacity(2048)
        audioFrames.reserveCapacity(4096)
    }

    /// Starts a new connection's streams: video first, then optionally one audio stream.
    /// Ends the current run if any.
    public func begin(streams: [StreamDescription]) throws {
        try end()
        guard let v = streams.first, v.codec.isVideo else { throw MediaError(.unsupported, "no video stream") }
        self.streams = Array(streams.prefix(2))
        self.timebases = self.streams.map { Timebase($0.timebaseNum, $0.timebaseDen) }
        initSegment = nil
        entries = []
        inbandParameterSets = []
        heldAudio.clear()
    }

    /// `judged`: counts towards `videoFramesRefused`.
    private func drop(_ why: DroppedFrames, video judged: Bool) {
        counters.droppedFrames.add(1, ordering: .relaxed)
        lastDropped = why
        if judged { videoFramesRefused += 1 }
    }

    /// Ends the current run: completes the open segment.
    public func end() throws {
        guard runActive else { return }
        runActive = false
        try closeSegment(nextVideoDTS: nil)
    }

    /// Media times the segmenter works with: within ±2^61 ticks (±800,000 years), so that
    /// the difference of any two fits in Int64.
    static let mediaTimeLimit: Int64 = 1 << 61

    /// A timestamp of stream `i` in 90 kHz ticks, or nil if it cannot be one (a plugin's
    /// nanosecond clock with a wrong time base, a value near Int64's ends).
    @inline(__always)
    private func to90k(_ t: Int64, _ i: Int) -> Int64? {
        guard let v = timebases[i].to90k(t), v > -Self.mediaTimeLimit, v < Self.mediaTimeLimit else { return nil }
        return v
    }

    /// Logs a problem with the stream once per run (never once per packet).
    private var reported: Set<String> = []
    private func reportOnce(_ what: String) {
        guard reported.insert(what).inserted else { return }
        logger.notice("camera \(camera.name): \(what)")
    }

    /// Records one packet. `data` is only borrowed for the call. `capture90k`: when the packet
    /// was captured, on the wall clock, as its source computed it once (the recording gate's
    /// CaptureClock for a live camera, the card file's own time for card footage). A segment
    /// starts at its first frame's capture time; within a segment, frames are placed by their
    /// media time.
    public func append(
        stream i: Int, pts: Int64, dts rawDTS: Int64, duration: Int64, isKey: Bool,
        data: UnsafeRawBufferPointer, capture90k: Int64
    ) throws {
        guard i >= 0, i < streams.count else {
            drop(.packetOfUnknownStream, video: false)
            return
        }
        // Capture times reach here from cameras' clocks: kept to the supported years, so the
        // segment's wall-clock arithmetic below cannot overflow.
        self.capture90k = min(max(capture90k, Time90k.supported.lowerBound), Time90k.supported.upperBound)
        let nopts = Int64.min
        let dtsIn = rawDTS != nopts ? rawDTS : pts
        guard dtsIn != nopts else { return }
        guard data.count <= FragmentedMP4Writer.maxSampleBytes else {
            reportOnce("dropped a \(data.count)-byte frame (larger than any camera sends)")
            drop(.frameTooLarge, video: i == 0)
            return
        }
        guard let dts = to90k(dtsIn, i), let pts90k = pts != nopts ? to90k(pts, i) : dts else {
            reportOnce("dropped frames whose timestamps do not fit the stream's time base \(timebases[i])")
            drop(.timestampsOutOfRange, video: i == 0)
            return
        }
        if i == 0 {
            try appendVideo(dts: dts, pts: pts90k, isKey: isKey, data: data)
        } else {
            try appendAudio(dts: dts, duration: duration > 0 ? duration : 0, data: data)
        }
    }

    private func appendVideo(dts: Int64, pts: Int64, isKey: Bool, data: UnsafeRawBufferPointer) throws {
        if runActive && pendingVideo && dts == lastVideoDTS, let file {
            // Another piece of the same access unit (e.g. parameter sets sent apart from the
            // IDR slice with one RTP timestamp): it belongs to the same sample.
            if file.extendLast(track: 0, isKey: isKey, annexB: videoIsAnnexB, data: data) {
                if isKey && !pendingVideoKey {
                    pendingVideoKey = true
                    keyFrames += 1
                }
                return
            }
            // A "frame" that keeps growing under one timestamp is a broken stream: keep what
            // was recorded and wait for the next key frame.
            reportOnce(
                "a frame grew past \(FragmentedMP4Writer.maxSampleBytes >> 20) MiB under one timestamp; starting a new run"
            )
            runActive = false
            runEnd = .frameTooLarge
            try closeSegment(nextVideoDTS: nil)
            return
        }
        if runActive && isKey,
            let updated = RecordedStreams.resized(
                streams[0], keyFrame: data, annexB: videoIsAnnexB, seen: &inbandParameterSets)
        {
            logger.notice(
                "camera \(camera.name): picture size changed from \(streams[0].width)x\(streams[0].height) to \(updated.width)x\(updated.height); starting a new run"
            )
            runActive = false
            try closeSegment(nextVideoDTS: dts)
            streams[0] = updated
            initSegment = nil
        }
        if runActive {
            let step = dts - lastVideoDTS
            if step <= 0 || step > settings.maxFrameGap90k {
                logger.notice("camera \(camera.name): timestamp jump of \(Double(step) / 90_000) s; starting a new run")
                runActive = false
                runEnd = .timestampJump
                try closeSegment(nextVideoDTS: nil)
            }
        }
        if !runActive {
            guard isKey else {
                drop(.waitingForKeyFrame(after: runEnd), video: runEnd != nil)
                return
            }  // a run starts at a key frame
            try startRun(firstDTS: dts, data: data)
            runEnd = nil
        }
        if pendingVideo {
            try finishPendingVideo(duration: dts - lastVideoDTS)
        }
        guard let file else { return }
        let segmentAge = dts - segmentFirstDTS
        if isKey && segmentAge >= Int64(settings.segmentSeconds) * 90_000 {
            try closeSegment(nextVideoDTS: dts)
            try openSegment(firstDTS: dts)
        } else if !isKey && segmentAge >= Int64(settings.segmentSeconds) * 90_000 * settings.maxSegmentFactor {
            reportOnce("no key frame for \(segmentAge / 90_000) s; starting a new run at the next one")
            runActive = false
            runEnd = .noKeyFrame
            try closeSegment(nextVideoDTS: dts)
            return
        } else if isKey || dts - fragmentStartDTS >= settings.maxFragment90k
            || file.pendingBytes >= settings.maxFragmentBytes
        {
            try flushFragment(at: dts)
        }
        let w = self.file ?? file
        let decodeTime = UInt64(clamping: dts - segmentFirstDTS)
        let cts = Int32(clamping: pts - dts)
        if videoIsAnnexB {
            w.appendAnnexB(track: 0, decodeTime: decodeTime, isKey: isKey, compositionOffset: cts, data: data)
        } else {
            w.append(
                track: 0, decodeTime: decodeTime,
                sample: Sample(duration: 0, size: UInt32(data.count), isKey: isKey, compositionOffset: cts), data: data)
        }
        if runSeq == 1 { refineRunStart(dts: dts) }
        if eventActive, let row = segment, !row.hasEvent, let ref = segmentRef {
            segment?.hasEvent = true
            writer.submit(.markEvent(ref))  // once per segment: the timeline shows it at once
        }
        // The newest frame's time, for status and /metrics, from the first frame of a run on
        // (its row may reach the index a moment later).
        lastFrame.store(segmentStart90k + (dts - segmentFirstDTS), ordering: .relaxed)
        pendingVideo = true
        pendingVideoKey = isKey
        pendingVideoCTS = cts
        lastVideoDTS = dts
        if isKey { keyFrames += 1 }
        try releaseAudio(before: dts + 1)
        if dts - lastProgressDTS >= settings.progressEvery90k {
            reportProgress()
            lastProgressDTS = dts
        }
    }

    /// Gives the newest video sample its duration, now that the next frame's time is known.
    func finishPendingVideo(duration: Int64) throws {
        guard let file else { return }
        let d = UInt32(clamping: max(duration, 1))
        file.setLastDuration(track: 0, d)
        lastVideoDuration = Int64(d)
        let size = lastSampleSize
        videoFrames.append(
            FrameIndex.Frame(duration: d, size: size, isKey: pendingVideoKey, compositionOffset: pendingVideoCTS))
        videoDuration90k += Int64(d)
        pendingVideo = false
        lastFrame.store(segmentStart90k + (lastVideoDTS - segmentFirstDTS) + Int64(d), ordering: .relaxed)
    }

    /// While a run's first segment is open, its source's capture clock may still be settling
    /// (stepping back to the least-delayed packet, see CaptureClock): the segment starts at
    /// the earliest (capture time − media time since its first frame). Later segments start
    /// at their first frame's capture time, which by then only moves by a bounded slew.
    private func refineRunStart(dts: Int64) {
        guard let row = segment else { return }
        let candidate = capture90k - (dts - segmentFirstDTS)
        if candidate < row.start90k { segment?.start90k = candidate }
    }

    private var lastSampleSize: UInt32 { file?.lastSample(track: 0)?.size ?? 0 }

    private func appendAudio(dts: Int64, duration: Int64, data: UnsafeRawBufferPointer) throws {
        guard runActive, file != nil else { return }
        // Ahead of the newest video frame: held until the video reaches it (AudioHoldback).
        if dts > lastVideoDTS, heldAudio.hold(dts: dts, duration: duration, data: data) { return }
        try releaseAudio(before: nil)
        try writeAudio(dts: dts, duration: duration, data: data)
    }

    /// Writes the held audio from before `limit` (all: nil) into the open segment.
    func releaseAudio(before limit: Int64?) throws {
        guard !heldAudio.isEmpty else { return }
        try heldAudio.release(before: limit) { dts, duration, data in
            try writeAudio(dts: dts, duration: duration, data: data)
        }
    }

    private func writeAudio(dts: Int64, duration: Int64, data: UnsafeRawBufferPointer) throws {
        guard let file, streams.count > 1, let tracks = initSegment?.tracks, tracks.count > 1 else { return }
        let track = tracks[1]
        let rate = Int64(track.timescale)
        let rel = dts - segmentFirstDTS
        guard rel >= 0 else { return }  // audio from before this segment's first key frame
        if file.pendingCount(track: 1) == 0 && audioFrames.isEmpty {
            nextAudioTime = UInt64(clamping: Timebase.ticks90k.rescale(rel, to: .rate(rate)) ?? 0)
            file.setNextDecodeTime(track: 1, nextAudioTime)
            audioOffset90k = rel
        }
        // AAC frames are 1024 samples unless the input says otherwise.
        let d = duration > 0 ? UInt32(clamping: timebases[1].rescale(duration, to: .rate(rate)) ?? 1024) : 1024
        let sample = Sample(duration: d, size: UInt32(data.count), isKey: true)
        file.append(track: 1, decodeTime: nextAudioTime, sample: sample, data: data)
        nextAudioTime += UInt64(d)
        audioFrames.append(FrameIndex.Frame(duration: d, size: UInt32(data.count), isKey: true))
    }

    private var segmentStart90k: Int64 { segment?.start90k ?? capture90k }

    private func startRun(firstDTS: Int64, data: UnsafeRawBufferPointer) throws {
        if initSegment == nil {
            let s = try RecordedStreams.completed(streams, firstKeyFrame: data, camera: camera.name)
            streams = s
            timebases = streams.map { Timebase($0.timebaseNum, $0.timebaseDen) }
            videoIsAnnexB = s[0].isAnnexB
            let made = try InitSegment.make(streams: s)
            entries = made.tracks.map { writer.sampleEntry(SampleEntryRecord(track: $0)) }
            initSegment = made
        }
        runID = try writer.nextRunID()
        runSeq = 0
        runActive = true
        try openSegment(firstDTS: firstDTS)
    }
}
