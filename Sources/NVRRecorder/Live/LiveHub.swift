import Foundation
import NVRMedia
import NVRTime
import Synchronization

/// A camera's live video for viewers (the page's live view): the newest GOP, fed by the session
/// thread as packets arrive — whatever the recording mode — and read by any number of viewers
/// at their own pace, each frame as its own MP4 fragment.
///
/// The GOP is kept in memory only while the camera is watched: while a viewer is connected and
/// for `linger` after the last one asked for a frame. A camera no one watches costs no copy and
/// no memory (issue 35: most cameras are recorded, not watched). When a viewer comes, the
/// session thread fills the GOP at its next packet from `backfill` — the segment being written
/// (its file and the fragment not yet written) or the pre-roll buffer — so the first picture
/// still comes at once.
///
/// The recording side never waits for a viewer: it appends the frame to one reused buffer and
/// wakes whoever waits. A viewer that falls behind (its socket is slow) finds, when it asks
/// for its next frame, that a newer key frame has replaced its GOP: it jumps there and is told
/// so. Memory is one GOP per watched camera (capped), whatever the number of viewers.
public final class LiveHub: @unchecked Sendable {
    // @unchecked Sendable: every mutable field below is guarded by `lock`, but `warm`,
    // `described` and `backfill`, which only the thread that appends touches (it also calls
    // begin and end; close comes after it has gone); `viewers` and `watchedUntil` are atomic.

    /// What a viewer needs to start decoding: the init segment (ftyp + moov) and its codec.
    public struct Stream: Sendable, Equatable {
        public let generation: Int
        public let initSegment: [UInt8]
        /// RFC 6381, e.g. avc1.64001f (for MediaSource.isTypeSupported).
        public let codec: String
        public let width: Int
        public let height: Int
        let trackID: UInt32
    }

    /// Where a viewer is: which stream, which GOP, which frame of it.
    public struct Cursor: Sendable {
        var generation = -1
        var gop = -1
        var index = 0
        var sequence: UInt32 = 0
        public init() {}
    }

    public enum Next: Sendable {
        /// A new stream (the first, or the camera reconnected): (re)initialise the decoder.
        case stream(Stream)
        /// The next frame, as a moof + mdat.
        case frame(fragment: [UInt8], isKey: Bool)
        /// The viewer fell behind and continues from the newest key frame.
        case skipped
    }

    private struct Frame {
        var offset: Int
        var size: Int
        var dts: Int64
        var cts: Int32
        var isKey: Bool
    }

    /// Most bytes of one GOP kept (a camera with very long GOPs shows from its next key frame).
    public static let maxGOPBytes = 24 << 20

    /// How long the GOP is still kept after a viewer last asked for a frame (a page reloaded,
    /// a grid paged back and forth).
    public let lingerNanos: UInt64

    /// One frame of the newest GOP as `backfill` hands it over: times in 90 kHz on the same
    /// clock `append` is given; `lengthPrefixed` when the bytes are already in MP4 form (from
    /// the segment file) rather than as the camera sent them.
    public struct BackfillFrame {
        public var dts: Int64
        public var pts: Int64
        public var isKey: Bool
        public var data: UnsafeRawBufferPointer
        public var lengthPrefixed: Bool
        public init(dts: Int64, pts: Int64, isKey: Bool, data: UnsafeRawBufferPointer, lengthPrefixed: Bool) {
            self.dts = dts
            self.pts = pts
            self.isKey = isKey
            self.data = data
            self.lengthPrefixed = lengthPrefixed
        }
    }

    /// Where a hub that starts being watched finds the frames of the newest GOP received so far,
    /// oldest first (nothing when there are none). Called on the session thread, by `append`.
    public var backfill: ((_ sink: (BackfillFrame) -> Void) -> Void)?

    private let lock = NSLock()
    private var stream: Stream?
    /// The video stream of the connection, until parameter sets make its init segment.
    private var video: StreamDescription?
    private var annexB = false
    private var generation = 0
    private var gopID = 0
    /// Frames of the GOP before the current one (a viewer that read them all is not behind).
    private var previousGOPCount = 0
    private var bytes: [UInt8] = []
    private var frames: [Frame] = []
    private var gopFull = false
    private var firstDTS: Int64?
    /// The last frame's time, relative to the first; nil before the connection's first frame.
    private var lastDTS: Int64?
    private var lastDuration: Int64 = 3000
    private var waiters: [UUID: CheckedContinuation<Void, Never>] = [:]
    /// The camera's session ended for good (the camera was changed or removed): viewers leave
    /// it and look for the new session.
    private var closed = false
    /// Monotonic time (Interrupter.now) until which the GOP is kept with no viewer connected.
    private let watchedUntil = Atomic<UInt64>(0)
    /// The appending thread's: the GOP is being kept, and the connection's stream is described.
    private var warm = false
    private var described = false

    /// Whether a connection feeds it now (its stream may still wait for a key frame).
    public var isConnected: Bool { lock.withLock { video != nil } }

    /// Someone watches, or did a moment ago (`linger`).
    public var isWatched: Bool {
        viewers.load(ordering: .relaxed) > 0 || Interrupter.now() < watchedUntil.load(ordering: .relaxed)
    }

    /// How long a stream no one watches may wait in the socket between reads: a few frames.
    /// Recording and motion see the frames up to this much later; a viewer who comes stops the
    /// pacing before the next wait.
    public static let unwatchedReadPacing = 0.1

    /// Reads `input` in batches while no one watches this hub (LiveInput.pace).
    public func paceWhileUnwatched(_ input: any LiveInput) {
        input.pace(seconds: Self.unwatchedReadPacing) { [weak self] in self?.isWatched == false }
    }

    /// Frames and bytes of the GOP kept now (none while no one watches).
    public var keptFrames: Int { lock.withLock { frames.count } }
    public var keptBytes: Int { lock.withLock { bytes.count } }

    /// Viewers connected now (status, metrics, benchmarks).
    public let viewers = Atomic<Int>(0)

    /// `keepAlways`: the GOP is kept whether or not anyone watches — for a stream no file or
    /// buffer could fill it from (the sub-stream, which is not recorded, and small).
    public init(keepAlways: Bool = false, lingerSeconds: Double = 60) {
        self.keepAlways = keepAlways
        lingerNanos = UInt64(max(0, min(lingerSeconds, 86_400)) * 1e9)
    }
    private let keepAlways: Bool

    // MARK: The session thread

    /// A new connection's streams (video first); viewers restart with it.
    public func begin(streams: [StreamDescription]) {
        lock.lock()
        video = streams.first.flatMap { $0.codec.isVideo ? $0 : nil }
        annexB = video?.isAnnexB ?? false
        stream = nil
        described = false
        resetGOP()
        firstDTS = nil
        lastDTS = nil
        lock.unlock()
    }

    /// The session is over: `next` answers nil to every viewer from now on.
    public func close() { stop(closing: true) }

    /// The connection ended: viewers wait for the next one.
    public func end() { stop(closing: false) }

    private func stop(closing: Bool) {
        lock.lock()
        if closing { closed = true }
        video = nil
        stream = nil
        described = false
        warm = false  // the next connection decides again (and frees nothing it need not keep)
        forgetGOP()
        let w = takeWaiters()
        lock.unlock()
        for waiter in w { waiter.resume() }
    }

    private func resetGOP() {
        bytes.removeAll(keepingCapacity: true)
        frames.removeAll(keepingCapacity: true)
        previousGOPCount = 0
        gopFull = false
    }

    /// One video frame, times in 90 kHz (the stream's own clock). `data` is borrowed.
    public func append(dts: Int64, pts: Int64, isKey: Bool, data: UnsafeRawBufferPointer) {
        let watched = keepAlways || isWatched
        if watched != warm {
            warm = watched
            if !watched {
                lock.withLock { forgetGOP() }
            } else if !isKey, described, let backfill {
                // The GOP so far, before this frame (a key frame starts one by itself).
                backfill { f in
                    store(dts: f.dts, pts: f.pts, isKey: f.isKey, data: f.data, annexB: !f.lengthPrefixed && annexB)
                }
            }
        }
        if !warm {
            // Only the stream's description, so a viewer who comes gets it at once.
            if !described && isKey { described = lock.withLock { makeStream(keyFrame: data, annexB: annexB) } }
            return
        }
        store(dts: dts, pts: pts, isKey: isKey, data: data, annexB: annexB)
    }

    /// Nothing kept while no one watches: the bytes are freed, and times start again from the
    /// next frame kept (lock held).
    private func forgetGOP() {
        resetGOP()
        bytes = []
        frames = []
        firstDTS = nil
        lastDTS = nil
    }

    /// Adds a frame to the GOP and wakes the viewers. `annexB`: the bytes have start codes.
    private func store(dts: Int64, pts: Int64, isKey: Bool, data: UnsafeRawBufferPointer, annexB: Bool) {
        lock.lock()
        if stream == nil {
            guard isKey, makeStream(keyFrame: data, annexB: annexB) else {
                lock.unlock()
                return
            }
        }
        described = true
        if isKey {
            previousGOPCount = frames.count
            gopID &+= 1
            bytes.removeAll(keepingCapacity: true)
            frames.removeAll(keepingCapacity: true)
            gopFull = false
        }
        guard !frames.isEmpty || isKey, !gopFull else {
            lock.unlock()
            return
        }
        guard bytes.count + data.count + data.count / 3 + 8 <= Self.maxGOPBytes else {
            gopFull = true  // the rest of this GOP is not shown; viewers continue at the next key frame
            lock.unlock()
            return
        }
        // Times relative to the connection's first frame, always moving forward.
        let base = firstDTS ?? dts
        firstDTS = base
        var rel = Time90k.subtract(dts, base)
        if let last = lastDTS {
            // Times that go back or leap (a camera's clock, a hostile plugin) continue evenly.
            let step = Time90k.subtract(rel, last)
            if step <= 0 || step > 10 * 90_000 { rel = Time90k.add(last, lastDuration) } else { lastDuration = step }
        }
        lastDTS = rel
        let offset = bytes.count
        let size =
            annexB
            ? AnnexB.appendLengthPrefixed(data, to: &bytes)
            : {
                bytes.append(contentsOf: data)
                return data.count
            }()
        frames.append(
            Frame(offset: offset, size: size, dts: rel, cts: Int32(clamping: Time90k.subtract(pts, dts)), isKey: isKey))
        let w = takeWaiters()
        lock.unlock()
        for waiter in w { waiter.resume() }
    }

    /// The init segment, once parameter sets are known (out of band, or in this key frame).
    private func makeStream(keyFrame: UnsafeRawBufferPointer, annexB: Bool) -> Bool {
        guard var v = video else { return false }
        if v.extradata.isEmpty {
            v.extradata = ParameterSets.annexB(from: keyFrame, codec: v.codec, lengthPrefixed: !annexB)
            guard !v.extradata.isEmpty else { return false }
        }
        if v.width <= 0 || v.height <= 0, let size = ParameterSets.pictureSize(annexB: v.extradata, codec: v.codec) {
            v.width = size.width
            v.height = size.height
        }
        guard let made = try? InitSegment.make(streams: [v]), let track = made.tracks.first else {
            video = nil  // this connection's video cannot be described: no live view for it
            return false
        }
        generation &+= 1
        stream = Stream(
            generation: generation, initSegment: made.bytes, codec: track.rfc6381, width: Int(v.width),
            height: Int(v.height),
            trackID: track.trackID)
        return true
    }

    private func takeWaiters() -> [CheckedContinuation<Void, Never>] {
        guard !waiters.isEmpty else { return [] }
        let w = Array(waiters.values)
        waiters.removeAll(keepingCapacity: true)
        return w
    }

    // MARK: Viewers

    /// The next thing a viewer at `cursor` should send; waits until there is one. Returns nil
    /// when the task is cancelled (the viewer went away).
    public func next(_ cursor: inout Cursor) async -> Next? {
        watchedUntil.store(Interrupter.now() &+ lingerNanos, ordering: .relaxed)
        while !Task.isCancelled && !lock.withLock({ closed }) {
            if let r = lock.withLock({ step(&cursor) }) { return r }
            let id = UUID()
            await withTaskCancellationHandler {
                let seen = cursor
                await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                    // Anything new since the look above, or already cancelled: go on at once.
                    let now = lock.withLock { () -> Bool in
                        if Task.isCancelled || closed || stepAvailable(seen) { return true }
                        waiters[id] = c
                        return false
                    }
                    if now { c.resume() }
                }
            } onCancel: {
                lock.withLock { waiters.removeValue(forKey: id) }?.resume()
            }
        }
        return nil
    }

    /// Whether `step` would return something (lock held).
    private func stepAvailable(_ cursor: Cursor) -> Bool {
        guard let s = stream else { return false }
        if s.generation != cursor.generation || gopID != cursor.gop { return !frames.isEmpty }
        return cursor.index < frames.count
    }

    /// What comes next for `cursor`, or nil to wait (lock held).
    private func step(_ cursor: inout Cursor) -> Next? {
        guard let s = stream else { return nil }
        if s.generation != cursor.generation {
            guard !frames.isEmpty else { return nil }
            cursor.generation = s.generation
            cursor.gop = gopID
            cursor.index = 0
            return .stream(s)
        }
        if gopID != cursor.gop {
            guard !frames.isEmpty else { return nil }
            let caughtUp = gopID == cursor.gop &+ 1 && cursor.index >= previousGOPCount
            cursor.gop = gopID
            cursor.index = 0
            if !caughtUp { return .skipped }
        }
        guard cursor.index < frames.count else { return nil }
        let f = frames[cursor.index]
        let duration = cursor.index + 1 < frames.count ? frames[cursor.index + 1].dts - f.dts : lastDuration
        cursor.index += 1
        cursor.sequence &+= 1
        let fragment = bytes.withUnsafeBytes { all in
            LiveFragment.make(
                sequence: cursor.sequence, trackID: s.trackID, decodeTime: UInt64(max(f.dts, 0)),
                duration: UInt32(clamping: max(duration, 1)), compositionOffset: f.cts, isKey: f.isKey,
                data: UnsafeRawBufferPointer(rebasing: all[f.offset..<(f.offset + f.size)]))
        }
        return .frame(fragment: fragment, isKey: f.isKey)
    }
}
