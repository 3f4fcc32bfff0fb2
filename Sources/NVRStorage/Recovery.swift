import Foundation
import Logging
import NVRIndex
import NVRMedia
import NVRPlayback

/// Brings index and files back into agreement after a crash (see design/crash-safety.md).
public enum Recovery {
    public struct Report: Sendable, Equatable {
        public var recovered = 0
        public var dropped = 0
        public var deletionsFinished = 0
        public var bytesTruncated: Int64 = 0
        /// Segment files whose rows a crash kept out of the index (removed).
        public var unindexedFiles = 0
    }

    /// Finishes every segment left *writing* (truncated to its last complete fragment and
    /// indexed from its boxes) and every deletion left half done. `keepUnindexedFiles`: a damaged
    /// index journal was set aside, so a file without a row may be one whose row is in it.
    @discardableResult
    public static func run(
        index: any IndexStore, storage: StorageLayout, logger: Logger, now: Int64 = Time90k.now(),
        keepUnindexedFiles: Bool = false
    ) throws -> Report {
        var report = Report()
        if !keepUnindexedFiles {
            report.unindexedFiles = try removeUnindexedFiles(index: index, storage: storage, logger: logger, now: now)
        }
        for seg in try index.segments(state: .deleting) {
            unlink(storage.absolute(seg.path))
            try index.removeSegments(ids: [seg.id!])
            report.deletionsFinished += 1
        }
        for seg in try index.segments(state: .writing) {
            let path = storage.absolute(seg.path)
            let scanned: ScannedSegment
            do {
                scanned = try SegmentScanner.scan(path: path)
            } catch {
                // The file never got its first complete box, or is gone: nothing to keep.
                unlink(path)
                try index.removeSegments(ids: [seg.id!])
                report.dropped += 1
                logger.notice("recovery: dropped segment \(seg.path): \(error)")
                continue
            }
            guard let video = scanned.samples.first, !video.isEmpty else {
                unlink(path)
                try index.removeSegments(ids: [seg.id!])
                report.dropped += 1
                continue
            }
            if scanned.validLength < scanned.fileLength {
                try SegmentScanner.truncate(path: path, to: scanned.validLength)
                report.bytesTruncated += scanned.fileLength - scanned.validLength
            }
            func frames(_ s: [Sample]) -> [FrameIndex.Frame] { s.map(FrameIndex.Frame.init) }
            var row = seg
            row.duration90k = video.reduce(0) { $0 + Int64($1.duration) }
            row.bytes = scanned.validLength
            row.frames = video.count
            row.keyFrames = video.filter(\.isKey).count
            var audioStart: Int64?
            if scanned.samples.count > 1, !scanned.samples[1].isEmpty, scanned.timescales[1] > 0 {
                audioStart = Timebase(1, Int64(scanned.timescales[1])).to90k(
                    Int64(clamping: scanned.firstDecodeTimes[1])
                )
                .map { Time90k.add(seg.start90k, $0) }
            }
            let record = SegmentFramesRecord(
                segmentID: seg.id!, videoIndex: FrameIndex.encode(frames(video)),
                audioIndex: scanned.samples.count > 1 ? FrameIndex.encode(frames(scanned.samples[1])) : nil,
                fragmentIndex: FrameIndex.encodeFragments(
                    scanned.fragments.map(FrameIndex.Fragment.init),
                    tracks: scanned.trackIDs.count),
                audioStart90k: audioStart)
            try index.completeSegment(row, frames: record)
            report.recovered += 1
            logger.notice(
                "recovery: finished segment \(seg.path): \(row.frames) frames, \(Time90k.describeDuration(row.duration90k)), cut \(scanned.fileLength - scanned.validLength) bytes"
            )
        }
        return report
    }

    /// A live segment's file is made right after its row is handed to the index writer, which
    /// commits it within its flush interval: a crash in between leaves a file without a row.
    /// Such a file can only be newer than the camera's newest live row, so only the day
    /// folders from the day before that row to tomorrow are looked at (card footage, filed
    /// under past days, waits for its row before its file is made).
    static func removeUnindexedFiles(index: any IndexStore, storage: StorageLayout, logger: Logger, now: Int64) throws
        -> Int
    {
        let day: Int64 = 86_400 * 90_000
        var removed = 0
        for camera in try index.cameras(includeRemoved: true) {
            guard let id = camera.id else { continue }
            var folders: [String] = []
            let newest = try index.newestLiveStart(cameraID: id)
            if let newest {
                // Every day from that row to now; after a long pause only the days around each.
                let first = min(newest, now) - day
                let last = max(newest, now) + day
                let days =
                    (last - first) / day <= 400
                    ? Array(stride(from: first, through: last, by: Int(day)))
                    : [newest - day, newest, newest + day, now - day, now, now + day]
                folders = days.map { storage.dayFolder(camera: camera.name, time90k: $0) }
            } else {
                folders = ["recordings/\(camera.name)"]
            }
            for folder in Set(folders) {
                guard let files = FileManager.default.enumerator(atPath: storage.absolute(folder)) else { continue }
                while let f = files.nextObject() as? String {
                    let rel = folder + "/" + f
                    // Asked per file, of every camera's rows: a folder can hold another camera's
                    // files (a renamed camera's name taken again), and the clock may be off.
                    guard f.hasSuffix(".mp4"), try !index.hasSegment(path: rel) else { continue }
                    unlink(storage.absolute(rel))
                    removed += 1
                    logger.notice(
                        "recovery: removed \(rel): its row never reached the index (a crash within the index writer's flush interval)"
                    )
                }
            }
        }
        return removed
    }
}
