import Foundation
import NVRIndex
import NVRMedia
import Synchronization

/// JPEG snapshots from recordings: the newest key frame of a camera (cached for a second, so
/// a wall of viewers polling costs one decode), or the frame nearest any recorded time.
/// Only the samples needed are read: the key frame, and for `at` the frames up to the target.
public final class Snapshots: Sendable {
    public struct Snapshot: Sendable {
        public var jpeg: [UInt8]
        /// When the frame was captured, on the wall clock.
        public var time90k: Int64
        public var width: Int
        public var height: Int
    }

    private let index: any IndexStore
    private let storage: StorageLayout
    private let cacheSeconds: Double
    private struct CacheKey: Hashable {
        var camera: Int64
        var width: Int?
    }
    private let cache = Mutex<[CacheKey: (made: Double, snapshot: Snapshot)]>([:])

    public init(index: any IndexStore, storage: StorageLayout, cacheSeconds: Double = 1) {
        self.index = index
        self.storage = storage
        self.cacheSeconds = cacheSeconds
    }

    /// The camera's newest key frame (from the segment being written when there is one).
    public func latest(cameraID: Int64, width: Int?) throws -> Snapshot {
        let key = CacheKey(camera: cameraID, width: width)
        let now = monotonicSeconds()
        if let hit = cache.withLock({ $0[key] }), now - hit.made < cacheSeconds { return hit.snapshot }
        var made: Snapshot?
        for seg in try index.newestSegments(cameraID: cameraID, limit: 2) {
            let m = try SegmentMedia.load(seg, index: index, storage: storage, audioTimescale: nil)
            guard let last = m.video.indices.last else { continue }  // a segment just opened has no fragment yet
            let k = m.keyFrame(before: last)
            made = try decode(m, from: k, to: k, width: width)
            break
        }
        guard let made else { throw NothingRecorded(start: .min, end: .max) }
        cache.withLock { c in
            c = c.filter { now - $0.value.made < cacheSeconds }  // keep the cache to live cameras
            c[key] = (now, made)
        }
        return made
    }

    /// Most frames one `?at=` snapshot decodes (10 s at 30 fps).
    static let maxFramesDecoded = 300

    /// The recorded frame whose start is nearest `t`.
    public func frame(cameraID: Int64, at t: Int64, width: Int?, outline: JPEGEncoder.Outline? = nil) throws
        -> Snapshot
    {
        let segs = try index.segments(cameraID: cameraID, start90k: t, end90k: Time90k.add(t, 1))
        for seg in segs.reversed() {
            let m = try SegmentMedia.load(seg, index: index, storage: storage, audioTimescale: nil)
            guard let first = m.videoTimes.first, first <= t, t < m.end90k, let i = m.nearestFrame(to: t) else {
                continue
            }
            // Decoding costs every frame since the key frame; a camera with one key frame a
            // minute (or an hour) must not make one request decode thousands: past that, the
            // key frame itself is the picture.
            let key = m.keyFrame(before: i)
            return try decode(
                m, from: key, to: i - key > Self.maxFramesDecoded ? key : i, width: width, outline: outline)
        }
        throw NothingRecorded(start: t, end: Time90k.add(t, 1))
    }

    private func decode(_ m: SegmentMedia, from: Int, to: Int, width: Int?, outline: JPEGEncoder.Outline? = nil)
        throws -> Snapshot
    {
        guard let entry = try index.sampleEntry(id: m.segment.videoEntryID) else {
            throw IndexError("sample entry \(m.segment.videoEntryID) missing")
        }
        let fd = open(m.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw MediaError.posix(.read, "cannot open \(m.path)", errno) }
        defer { close(fd) }
        let decoder = try VideoDecoder(sampleEntry: [UInt8](entry.box))
        let picture = try decoder.decode(
            count: to - from + 1, sizes: { Int(m.video[from + $0].size) },
            read: { i, buf in
                let n = pread(fd, buf.baseAddress, buf.count, off_t(m.videoOffsets[from + i]))
                guard n == buf.count else { throw MediaError(.corrupt, "\(m.path) is shorter than the index says") }
            })
        let jpeg = try JPEGEncoder().encode(picture, width: width, outline: outline)
        let size = JPEGEncoder.outputSize(width: picture.width, height: picture.height, requestedWidth: width)
        return Snapshot(jpeg: jpeg, time90k: m.videoTimes[to], width: size.width, height: size.height)
    }
}

/// Seconds on the monotonic clock, for cache ages (wall-clock steps must not age a cache).
public func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
