import Foundation
import Logging
import NVRIndex
import NVRMedia
import NVRPlayback
import NVRStorage
import NVRTime
import Synchronization

/// A segment file's life: opened at a run's key frame, fragments flushed, closed and
/// completed in the index (with a retry when the disk is full), progress reported.
extension Segmenter {
    func openSegment(firstDTS: Int64) throws {
        guard let initSegment else { return }
        if entries.contains(where: \.isAbandoned) {
            // The index writer gave up inserting this format's sample entry: no row could name
            // it. The connection ends; the next one hands the entry over again.
            throw MediaError(.write, "the index did not take the stream's sample entry")
        }
        let start = capture90k
        let rel = storage.segmentPath(camera: camera.name, start90k: start, runID: runID, seq: runSeq)
        let abs = storage.absolute(rel)
        try FileManager.default.createDirectory(
            atPath: (abs as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        // Row handed over first, then the file: the writer commits the row within its flush
        // interval; recovery removes a file whose row a crash kept out (design/crash-safety.md).
        // Card footage (in the past, where recovery does not look) waits for its row.
        let row = SegmentRecord(
            cameraID: cameraID, runID: runID, runSeq: runSeq, start90k: start, path: rel,
            videoEntryID: entries[0].value ?? 0, audioEntryID: entries.count > 1 ? entries[1].value : nil,
            source: settings.source)
        let ref = writer.insertSegment(row, entries: entries)
        if settings.source != "live" {
            // In the index, not only in its journal (PostgreSQL unreachable): then the row is
            // taken back (it goes after the insert), as no file follows it.
            guard writer.flush(applied: 30), ref.value != nil else {
                writer.submit(.removeSegment(ref))
                throw MediaError(.noSpace, "the index did not take the segment's row")
            }
        }
        do {
            file = try retryingOnNoSpace {
                unlink(abs)  // a previous attempt may have left an empty file
                return try FragmentedMP4Writer(path: abs, initSegment: initSegment)
            }
        } catch {
            unlink(abs)
            writer.submit(.removeSegment(ref))
            throw error
        }
        segment = row
        segmentRef = ref
        runSeq += 1
        segmentFirstDTS = firstDTS
        fragmentStartDTS = firstDTS
        lastProgressDTS = firstDTS
        videoFrames.removeAll(keepingCapacity: true)
        audioFrames.removeAll(keepingCapacity: true)
        fragments.removeAll(keepingCapacity: true)
        audioOffset90k = nil
        keyFrames = 0
        videoDuration90k = 0
        nextAudioTime = 0
    }

    func flushFragment(at dts: Int64) throws {
        guard let file else { return }
        do {
            if let f = try retryingOnNoSpace({ try file.flushFragment() }) {
                fragments.append(FrameIndex.Fragment(f))
            }
        } catch {
            // The writer cut the file back to its last complete fragment; keep what is there.
            try? completeSegment(dropUnflushed: true)
            runActive = false
            throw error
        }
        fragmentStartDTS = dts
    }

    /// Runs `body` (a file write); if it fails for lack of space (ENOSPC) and retention frees
    /// some, runs it once more.
    func retryingOnNoSpace<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let e as MediaError where e.kind == .noSpace {
            guard let onNoSpace, onNoSpace() else {
                logger.error("camera \(camera.name): disk full and nothing left to delete: \(e.message)")
                throw e
            }
            logger.warning("camera \(camera.name): disk full; retention freed space, writing again")
            return try body()
        }
    }

    /// Writes the last fragment and completes the segment's row. With no next frame, the
    /// last frame lasts as long as the one before it.
    func closeSegment(nextVideoDTS: Int64?) throws {
        guard file != nil else { return }
        // The held audio of this segment's time span is its own. What lies past its last video
        // frame belongs to the next segment if the run goes on, and to no segment if it ends
        // (a camera whose video lags its audio would otherwise end with a segment of more
        // audio than video: RecordingTests saw 0.75 s of audio in a 0.07-s last segment).
        try releaseAudio(before: nextVideoDTS ?? (lastVideoDTS + max(lastVideoDuration, 1)))
        if !runActive { heldAudio.clear() }
        if pendingVideo {
            try finishPendingVideo(duration: nextVideoDTS.map { $0 - lastVideoDTS } ?? max(lastVideoDuration, 1))
        }
        try flushFragment(at: nextVideoDTS ?? lastVideoDTS)
        try completeSegment(dropUnflushed: false)
    }

    /// Completes the segment's row from what is in its file. A write or sync that fails here
    /// still completes a row that matches the file (the fragments written before the failure).
    func completeSegment(dropUnflushed: Bool) throws {
        guard let file, var row = segment, let ref = segmentRef else { return }
        self.file = nil
        self.segment = nil
        self.segmentRef = nil
        pendingVideo = false
        var failure: (any Error)?
        if dropUnflushed {
            file.abandon()
        } else {
            do { try file.finish() } catch {
                failure = error
                file.abandon()
            }
        }
        if dropUnflushed || failure != nil {
            // Only flushed fragments are in the file.
            let nv = fragments.reduce(0) { $0 + ($1.sampleCounts.first ?? 0) }
            let na = fragments.reduce(0) { $0 + ($1.sampleCounts.count > 1 ? $1.sampleCounts[1] : 0) }
            videoFrames = Array(videoFrames.prefix(nv))
            audioFrames = Array(audioFrames.prefix(na))
            keyFrames = videoFrames.filter(\.isKey).count
        }
        row.duration90k = videoFrames.reduce(0) { $0 + Int64($1.duration) }
        row.bytes = file.bytesWritten
        row.frames = videoFrames.count
        row.keyFrames = keyFrames
        if videoFrames.isEmpty {
            // Nothing playable was written: remove the file and the row.
            unlink(storage.absolute(row.path))
            writer.submit(.removeSegment(ref))
        } else {
            let frames = SegmentFramesRecord(
                segmentID: 0, videoIndex: FrameIndex.encode(videoFrames),
                audioIndex: streams.count > 1 ? FrameIndex.encode(audioFrames) : nil,
                fragmentIndex: FrameIndex.encodeFragments(fragments, tracks: streams.count),
                audioStart90k: audioOffset90k.map { row.start90k + $0 })
            counters.segments.add(1, ordering: .relaxed)
            let done = onSegmentComplete
            let final = row
            let entries = entries
            writer.submit(.completeSegment(ref, row, frames, entries: entries)) {
                guard let done else { return }
                var completed = final
                completed.id = ref.value
                completed.videoEntryID = entries[0].value ?? completed.videoEntryID
                completed.audioEntryID = entries.count > 1 ? entries[1].value : nil
                completed.state = .complete
                done(completed)
            }
        }
        if let failure { throw failure }
    }

    func reportProgress() {
        guard let file, let row = segment, let ref = segmentRef else { return }
        writer.submit(
            .segmentProgress(
                ref, start90k: row.start90k, duration90k: videoDuration90k, bytes: file.bytesWritten,
                frames: videoFrames.count, keyFrames: keyFrames))
    }
}
