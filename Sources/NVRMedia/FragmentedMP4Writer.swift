#if canImport(Glibc)
    import Glibc
#endif

/// Writes one segment file: the init segment, then a moof + mdat per fragment.
///
/// Samples of the open fragment are buffered in memory (reused between fragments) and
/// written with a single writev, so a crash loses at most the unfinished fragment and
/// every fragment on disk is complete or absent after recovery truncates.
public final class FragmentedMP4Writer {
    public let path: String
    public let tracks: [TrackInfo]
    private var fd: Int32
    public private(set) var bytesWritten: Int64 = 0
    private var sequence: UInt32 = 0

    private struct PendingTrack {
        var samples: [Sample] = []
        var data: [UInt8] = []
        var baseDecodeTime: UInt64 = 0
        var started = false
    }
    private var pending: [PendingTrack]
    private var moof = BoxWriter(capacity: 4096)

    /// Creates the file (failing if it exists) and writes the init segment.
    public init(path: String, initSegment: InitSegment) throws {
        self.path = path
        self.tracks = initSegment.tracks
        self.pending = Array(repeating: PendingTrack(), count: initSegment.tracks.count)
        for i in pending.indices {
            pending[i].samples.reserveCapacity(64)
            pending[i].data.reserveCapacity(i == 0 ? 1 << 20 : 1 << 14)
        }
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw MediaError.posix(.write, "cannot create \(path)", errno) }
        try initSegment.bytes.withUnsafeBytes { try writeAll([$0]) }
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Largest sample (one compressed frame) the writer takes: far above any camera's frame,
    /// and a bound on what a broken stream can make it buffer.
    public static let maxSampleBytes = 32 << 20

    /// Number of samples buffered for a track in the open fragment.
    public func pendingCount(track: Int) -> Int { pending[track].samples.count }

    /// Bytes buffered for the open fragment, all tracks.
    public var pendingBytes: Int { pending.reduce(0) { $0 + $1.data.count } }

    /// Buffers a sample whose bytes are already in MP4 form. Its duration may be set later
    /// with `setLastDuration` (the recorder learns it from the next packet).
    public func append(track: Int, decodeTime: UInt64, sample: Sample, data: UnsafeRawBufferPointer) {
        if !pending[track].started {
            pending[track].baseDecodeTime = decodeTime
            pending[track].started = true
        }
        pending[track].data.append(contentsOf: data)
        pending[track].samples.append(sample)
    }

    /// Buffers a video sample given in Annex B, converting it to length-prefixed NAL units.
    public func appendAnnexB(
        track: Int, decodeTime: UInt64, isKey: Bool, compositionOffset: Int32, data: UnsafeRawBufferPointer
    ) {
        if !pending[track].started {
            pending[track].baseDecodeTime = decodeTime
            pending[track].started = true
        }
        let size = AnnexB.appendLengthPrefixed(data, to: &pending[track].data)
        pending[track].samples.append(
            Sample(duration: 0, size: UInt32(size), isKey: isKey, compositionOffset: compositionOffset))
    }

    /// Adds more bytes of the same access unit (same timestamp) to the newest sample of a
    /// track. False (and nothing added) when the sample would pass `maxSampleBytes`.
    public func extendLast(track: Int, isKey: Bool, annexB: Bool, data: UnsafeRawBufferPointer) -> Bool {
        guard let lastSample = pending[track].samples.last else { return true }
        // Length prefixes can make Annex B data up to a third larger (a 4-byte prefix for a
        // 3-byte start code per NAL unit of one byte or more).
        guard Int(lastSample.size) + data.count + data.count / 3 + 4 <= Self.maxSampleBytes else { return false }
        let added: Int
        if annexB {
            added = AnnexB.appendLengthPrefixed(data, to: &pending[track].data)
        } else {
            pending[track].data.append(contentsOf: data)
            added = data.count
        }
        let last = pending[track].samples.count - 1
        pending[track].samples[last].size += UInt32(added)
        if isKey { pending[track].samples[last].isKey = true }
        return true
    }

    /// Sets the duration of the newest buffered sample of a track.
    public func setLastDuration(track: Int, _ duration: UInt32) {
        guard !pending[track].samples.isEmpty else { return }
        pending[track].samples[pending[track].samples.count - 1].duration = duration
    }

    /// The newest buffered sample of a track, if any.
    public func lastSample(track: Int) -> Sample? { pending[track].samples.last }

    /// The buffered samples of a track from `index` on, oldest first, with their bytes (borrowed
    /// for the call): frames not yet written, for a reader that wants them now (the live view).
    public func forEachPending(track: Int, from index: Int, _ body: (Sample, UnsafeRawBufferPointer) -> Void) {
        guard track >= 0, track < pending.count, index >= 0 else { return }
        let t = pending[track]
        t.data.withUnsafeBytes { all in
            var offset = 0
            for (i, sample) in t.samples.enumerated() {
                let size = Int(sample.size)
                guard offset + size <= all.count else { return }
                if i >= index { body(sample, UnsafeRawBufferPointer(rebasing: all[offset..<(offset + size)])) }
                offset += size
            }
        }
    }

    /// Writes the open fragment (if it has samples) and returns where it went.
    @discardableResult
    public func flushFragment() throws -> FragmentInfo? {
        guard pending.contains(where: { !$0.samples.isEmpty }) else { return nil }
        sequence += 1
        moof.removeAll()
        var dataOffsetPatches: [(at: Int, track: Int)] = []
        moof.box("moof") { w in
            w.fullBox("mfhd", version: 0, flags: 0) { $0.u32(sequence) }
            for (i, t) in pending.enumerated() where !t.samples.isEmpty {
                w.box("traf") { w in
                    // default-base-is-moof: data offsets count from this moof's first byte.
                    w.fullBox("tfhd", version: 0, flags: 0x020000) { $0.u32(tracks[i].trackID) }
                    w.fullBox("tfdt", version: 1, flags: 0) { $0.u64(t.baseDecodeTime) }
                    let hasCTS = t.samples.contains { $0.compositionOffset != 0 }
                    let flags: UInt32 = 0x000001 | 0x000100 | 0x000200 | 0x000400 | (hasCTS ? 0x000800 : 0)
                    w.fullBox("trun", version: 1, flags: flags) { w in
                        w.u32(UInt32(t.samples.count))
                        dataOffsetPatches.append((w.count, i))
                        w.i32(0)
                        for s in t.samples {
                            w.u32(s.duration)
                            w.u32(s.size)
                            w.u32(s.isKey ? 0x0200_0000 : 0x0101_0000)
                            if hasCTS { w.i32(s.compositionOffset) }
                        }
                    }
                }
            }
        }
        let moofSize = moof.count
        var payload = 0
        var offsets = [Int](repeating: 0, count: pending.count)
        for (i, t) in pending.enumerated() {
            offsets[i] = payload
            payload += t.data.count
        }
        for p in dataOffsetPatches { moof.patchU32(at: p.at, UInt32(moofSize + 8 + offsets[p.track])) }
        // mdat header
        let mdatSize = UInt32(8 + payload)
        moof.u32(mdatSize)
        moof.fourcc("mdat")
        let fragmentStart = bytesWritten
        try moof.bytes.withUnsafeBytes { header in
            try withDataBuffers(0, [header]) { try writeAll($0) }
        }
        let info = FragmentInfo(
            dataOffset: fragmentStart + Int64(moofSize) + 8, sampleCounts: pending.map(\.samples.count))
        for i in pending.indices {
            pending[i].baseDecodeTime += pending[i].samples.reduce(0) { $0 + UInt64($1.duration) }
            pending[i].samples.removeAll(keepingCapacity: true)
            pending[i].data.removeAll(keepingCapacity: true)
        }
        return info
    }

    /// Nests withUnsafeBytes over every track's data so one writev sends the whole fragment.
    private func withDataBuffers(
        _ i: Int, _ acc: [UnsafeRawBufferPointer], _ body: ([UnsafeRawBufferPointer]) throws -> Void
    ) throws {
        if i == pending.count { return try body(acc) }
        try pending[i].data.withUnsafeBytes { try withDataBuffers(i + 1, acc + [$0], body) }
    }

    /// Tells the writer where the next sample's decode time starts for a track whose fragment is empty.
    public func setNextDecodeTime(track: Int, _ t: UInt64) {
        if pending[track].samples.isEmpty {
            pending[track].baseDecodeTime = t
            pending[track].started = true
        }
    }

    /// Flushes, syncs and closes the file.
    public func finish() throws {
        try flushFragment()
        if fd >= 0 {
            // The row is marked complete only after this: a sync that failed (EIO, ENOSPC on
            // delayed allocation) must not be taken for data on disk.
            let rc = fdatasync(fd)
            let e = errno
            close(fd)
            fd = -1
            if rc != 0 { throw MediaError.posix(e == ENOSPC ? .noSpace : .write, "cannot sync \(path)", e) }
        }
    }

    /// Closes without flushing the open fragment (used when the disk is full).
    public func abandon() {
        if fd >= 0 {
            close(fd)
            fd = -1
        }
    }

    private func writeAll(_ buffers: [UnsafeRawBufferPointer]) throws {
        var iov = buffers.filter { $0.count > 0 }.map {
            iovec(iov_base: UnsafeMutableRawPointer(mutating: $0.baseAddress), iov_len: $0.count)
        }
        var remaining = iov.reduce(0) { $0 + $1.iov_len }
        var first = 0
        while remaining > 0 {
            let n = iov[first...].withUnsafeBufferPointer { writev(fd, $0.baseAddress, Int32($0.count)) }
            if n < 0 {
                if errno == EINTR { continue }
                let e = errno
                // Put the file back to the last complete fragment so it stays valid, and the
                // write position with it (a partial writev moved it), so a retry appends there.
                _ = ftruncate(fd, off_t(bytesWritten))
                _ = lseek(fd, off_t(bytesWritten), SEEK_SET)
                throw MediaError.posix(e == ENOSPC ? .noSpace : .write, "cannot write \(path)", e)
            }
            remaining -= n
            var left = n
            while left > 0 && first < iov.count {
                if left >= iov[first].iov_len {
                    left -= iov[first].iov_len
                    first += 1
                } else {
                    iov[first].iov_base = iov[first].iov_base.advanced(by: left)
                    iov[first].iov_len -= left
                    left = 0
                }
            }
        }
        bytesWritten += Int64(buffers.reduce(0) { $0 + $1.count })
    }
}

extension MediaError {
    public static func posix(_ kind: Kind, _ what: String, _ e: Int32) -> MediaError {
        MediaError(kind, "\(what): \(String(cString: strerror(e)))", code: e)
    }
}
