import Foundation
import NVRMedia

extension Segmenter {
    /// The frames of the newest GOP in the segment being written, oldest first, as they are in
    /// the file (length-prefixed): those of fragments already written are read back from the
    /// file (just written, so from the page cache), the rest come from the fragment not yet
    /// written. For a live view that starts being watched (LiveHub.backfill), on the thread that
    /// appends. Hands over nothing when no segment is open or the GOP is over `budget` bytes,
    /// and stops at the first frame it cannot read (what was handed over is still a whole GOP's
    /// beginning).
    func newestGOP(budget: Int, _ sink: (LiveHub.BackfillFrame) -> Void) {
        guard runActive, let file else { return }
        let finished = videoFrames.count
        let total = finished + (pendingVideo ? 1 : 0)
        let flushed = fragments.reduce(0) { $0 + ($1.sampleCounts.first ?? 0) }
        // The writer's own count must agree, or the offsets below would be wrong.
        guard flushed <= finished, total - flushed == file.pendingCount(track: 0) else { return }
        let key = pendingVideo && pendingVideoKey ? finished : videoFrames.lastIndex(where: \.isKey)
        guard let key else { return }
        var dts = segmentFirstDTS
        for i in 0..<key { dts += Int64(videoFrames[i].duration) }
        // A GOP larger than the live view keeps is not read at all (it would be dropped).
        var size = videoFrames[min(key, finished)...].reduce(0) { $0 + Int($1.size) }
        if pendingVideo { size += Int(file.lastSample(track: 0)?.size ?? 0) }
        guard size <= budget else { return }

        // Written fragments: one read per fragment, of its video samples from the key frame on.
        var first = 0
        let fd = key < flushed ? open(file.path, O_RDONLY | O_CLOEXEC) : -1
        defer { if fd >= 0 { close(fd) } }
        for fragment in fragments {
            let count = fragment.sampleCounts.first ?? 0
            defer { first += count }
            guard first + count > key else { continue }
            guard fd >= 0 else { return }
            var offset = fragment.dataOffset
            for i in first..<max(first, key) { offset += Int64(videoFrames[i].size) }
            let from = max(first, key)
            let length = videoFrames[from..<(first + count)].reduce(0) { $0 + Int($1.size) }
            var buffer = [UInt8](repeating: 0, count: length)
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, length, off_t(offset)) }
            guard n == length else { return }
            buffer.withUnsafeBytes { all in
                var at = 0
                for i in from..<(first + count) {
                    let f = videoFrames[i]
                    let size = Int(f.size)
                    sink(
                        LiveHub.BackfillFrame(
                            dts: dts, pts: dts + Int64(f.compositionOffset), isKey: f.isKey,
                            data: UnsafeRawBufferPointer(rebasing: all[at..<(at + size)]), lengthPrefixed: true))
                    at += size
                    dts += Int64(f.duration)
                }
            }
        }
        // The fragment not yet written.
        var i = max(key, flushed)
        file.forEachPending(track: 0, from: i - flushed) { sample, data in
            // The newest frame has no duration yet: its time is the one it came with.
            let frameDTS = i < finished ? dts : lastVideoDTS
            sink(
                LiveHub.BackfillFrame(
                    dts: frameDTS, pts: frameDTS + Int64(sample.compositionOffset), isKey: sample.isKey, data: data,
                    lengthPrefixed: true))
            if i < finished { dts += Int64(videoFrames[i].duration) }
            i += 1
        }
    }
}
