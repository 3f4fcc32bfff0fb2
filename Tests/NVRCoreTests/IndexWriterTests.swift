import Foundation
import NVRIndex
import NVRMedia
import NVRPlayback
import NVRRecorder
import NVRStorage
import NVRTime
import Synchronization
import TestSupport
import Testing

/// The index writer: camera threads hand rows over and never wait for SQLite; a full index
/// waits for retention and loses nothing; recovery removes a file whose row a crash kept out.
@Suite struct IndexWriterTests {
    /// Records `clip` (2 s segments) through a fresh segmenter; returns once it is done.
    static func record(_ clip: String, camera: CameraRecord, storage: StorageLayout, writer: IndexWriter) throws {
        let seg = Segmenter(
            camera: camera, storage: storage, writer: writer, settings: .init(segmentSeconds: 2),
            logger: TestEnvironment.logger)
        let d = try Demuxer(Demuxer.Options(url: clip), interrupter: Interrupter())
        try seg.begin(streams: d.streams)
        let tb = d.streams[0]
        let base = Time90k.now()
        while true {
            do {
                try d.read { p in
                    let t = p.dts * 90_000 * Int64(tb.timebaseNum) / Int64(tb.timebaseDen)
                    try seg.append(
                        stream: 0, pts: t, dts: t, duration: 0, isKey: p.isKey, data: p.data, capture90k: base + t)
                }
            } catch is MediaError { break }
        }
        try seg.end()
    }

    /// Run ids the index will not give (here its counter row is gone): a camera thread that
    /// has used up the writer's spare ones gets the index's error, and does not wait for ever.
    @Test func aRefusedRunIDReservationIsAnErrorNotAHang() throws {
        let h = try RecorderHarness()
        let writer = h.recorder.writer
        writer.flush()  // the writer has reserved its first block
        try h.index.pool.write { try $0.execute(sql: "DELETE FROM run_counter") }
        let outcome = Mutex<[String]>([])
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            for _ in 0..<200 {
                do { _ = try writer.nextRunID() } catch {
                    outcome.withLock { $0.append("\(error)") }
                    break
                }
            }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 30) == .success, "nextRunID still waits")
        let errors = outcome.withLock { $0 }
        #expect(errors.count == 1 && errors[0].contains("run_counter"), "\(errors)")
    }

    /// A recording gate given new settings from another thread (as the recorder does when the
    /// index says they changed) applies them at its next packet, reading nothing itself.
    static func settingsReachTheGate(camera: CameraRecord, writer: IndexWriter) throws {
        let seg = Segmenter(
            camera: camera, storage: StorageLayout(root: NSTemporaryDirectory()), writer: writer,
            settings: .init(segmentSeconds: 2), logger: TestEnvironment.logger)
        let tracker = EventTracker(
            camera: camera, writer: writer, logger: TestEnvironment.logger, preRoll90k: 0, postRoll90k: 0)
        let gate = RecordingGate(
            camera: camera, writer: writer, segmenter: seg, tracker: tracker, settings: RecordingSettings(),
            logger: TestEnvironment.logger)
        var off = RecordingSettings(mode: .off)
        off.motion.enabled = .off
        gate.offer(off)
        #expect(gate.settings.mode == .continuous, "taken at the next packet, not before")
        try gate.append(
            stream: 1, pts: 0, dts: 0, duration: 0, isKey: false, data: UnsafeRawBufferPointer(start: nil, count: 0))
        #expect(gate.settings == off && gate.activity.mode == .off)
    }

    func makeClip(_ h: RecorderHarness, size: String = "320x240") throws -> String {
        let clip = h.root + "/clip-\(size).ts"
        let r = try runProcess(
            "/usr/bin/ffmpeg",
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc=size=\(size):rate=25", "-t", "9",
                "-c:v", "libx264", "-g", "25", "-bf", "0", clip,
            ])
        #expect(r.status == 0, "\(r.stderr)")
        return clip
    }

    /// The packet path never waits for SQLite: with another connection holding the index's
    /// write lock from before the camera's first packet, a camera records two runs in two
    /// stream formats the index has never seen (new sample entries, new run ids), and its
    /// recording gate takes new settings.
    @Test func aCameraRecordsOnWhileSomeoneElseHoldsTheIndex() async throws {
        let h = try RecorderHarness()
        let clip = try makeClip(h)
        let wide = try makeClip(h, size: "640x360")
        let cam = try h.index.addCamera(CameraRecord(name: "w", plugin: "demo", config: "{}", created90k: 0))
        let storage = h.recorder.storage
        let writer = h.recorder.writer
        writer.flush()  // the writer has started: its spare run ids and known sample entries are in hand

        // A long write transaction (a retention pass, a checkpoint, another process) holds the
        // index while the camera records: it must finish without waiting for it.
        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let recorded = DispatchSemaphore(value: 0)
        let index = h.index
        DispatchQueue.global().async {
            try? index.pool.write { _ in
                held.signal()
                release.wait()
            }
        }
        held.wait()
        let failure = Mutex<String?>(nil)
        DispatchQueue.global().async {
            do {
                try Self.record(clip, camera: cam, storage: storage, writer: writer)
                try Self.record(wide, camera: cam, storage: storage, writer: writer)
                try Self.settingsReachTheGate(camera: cam, writer: writer)
            } catch { failure.withLock { $0 = "\(error)" } }
            recorded.signal()
        }
        let finishedWhileHeld = recorded.wait(timeout: .now() + 60) == .success
        // What /metrics shows meanwhile: the writes wait in the writer, the oldest for a while.
        try await Task.sleep(for: .milliseconds(500))
        let backlog = writer.backlog
        #expect(backlog.writes >= 10 && backlog.oldestSeconds >= 0.5, "backlog while the index is held: \(backlog)")
        release.signal()
        if !finishedWhileHeld { recorded.wait() }
        #expect(finishedWhileHeld, "the camera waited for the index")
        #expect(failure.withLock { $0 } == nil)
        // Once the index is free the rows are all there, complete, and match their files.
        let segs = try h.completeSegments("w")
        #expect(segs.count == 10)
        #expect(Set(segs.map(\.runID)).count == 2)
        for s in segs { try h.verify(s, videoCodec: "h264") }
        let byRun = segs.sorted { ($0.runID, $0.runSeq) < ($1.runID, $1.runSeq) }
        let widths = try byRun.map { try #require(try h.index.sampleEntry(id: $0.videoEntryID)).width }
        #expect(widths == Array(repeating: 320, count: 5) + Array(repeating: 640, count: 5), "\(widths)")
        #expect(writer.backlog.writes == 0 && writer.backlog.oldestSeconds == 0)
        #expect(writer.droppedWrites.load(ordering: .relaxed) == 0)
    }

    @Test func aFullIndexWaitsForRetentionAndLosesNothing() throws {
        let h = try RecorderHarness()
        let cam = try h.index.addCamera(CameraRecord(name: "f", plugin: "demo", config: "{}", created90k: 0))
        let entry = try h.index.sampleEntryID(
            SampleEntryRecord(
                codec: "h264", rfc6381: "avc1", width: 1, height: 1, sampleRate: 0,
                channels: 0, timescale: 90000, extradata: Data(), box: Data([7])))
        let writer = IndexWriter(index: h.index, logger: TestEnvironment.logger)
        defer { writer.close() }
        // SQLite answers SQLITE_FULL (as on a full disk) once the file would grow.
        let pages = try h.index.pool.write { db in
            let n = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            try db.execute(sql: "PRAGMA max_page_count = \(n)")
            return n
        }
        let asked = Atomic<Int>(0)
        let index = h.index
        writer.onNoSpace = {
            // "Retention" makes room on the second request: the writer keeps the rows meanwhile.
            guard asked.add(1, ordering: .relaxed).newValue >= 2 else { return false }
            try? index.pool.write { try $0.execute(sql: "PRAGMA max_page_count = \(pages * 100)") }
            return true
        }
        let blob = Data(repeating: 1, count: 64 << 10)
        var refs: [PendingRowID] = []
        for i in 0..<20 {
            let ref = writer.insertSegment(
                SegmentRecord(
                    cameraID: cam.id!, runID: 1, runSeq: i, start90k: Int64(i) * 90_000,
                    path: "recordings/f/\(i).mp4", videoEntryID: entry, audioEntryID: nil))
            writer.submit(
                .completeSegment(
                    ref,
                    SegmentRecord(
                        cameraID: cam.id!, runID: 1, runSeq: i, start90k: Int64(i) * 90_000,
                        duration90k: 90_000, path: "recordings/f/\(i).mp4", frames: 25,
                        videoEntryID: entry, audioEntryID: nil),
                    SegmentFramesRecord(
                        segmentID: 0, videoIndex: blob, audioIndex: nil, fragmentIndex: Data([1]),
                        audioStart90k: nil)))
            refs.append(ref)
        }
        writer.flush()
        #expect(asked.load(ordering: .relaxed) >= 2, "the index never filled: the test proves nothing")
        #expect(refs.allSatisfy { $0.value != nil })
        let segs = try h.index.segments(cameraID: cam.id!)
        #expect(segs.count == 20 && segs.allSatisfy { $0.state == .complete })
        #expect(try h.index.frames(segmentID: try #require(segs.last?.id))?.videoIndex == blob)
    }

    /// An index (through the writer's `RecordingStore` seam) that refuses one write — a
    /// constraint, a row gone meanwhile — for good: the batch it came in is applied write by
    /// write, the others are committed, and only that one is dropped (and counted).
    @Test func aWriteTheIndexRefusesCostsOnlyItself() throws {
        struct RefusesOnePath: RecordingStore {
            let index: IndexDatabase
            let refused: String
            func apply(_ writes: [RecordingWrite]) throws -> [(PendingRowID, Int64)] {
                for case .insertSegment(let row, _, _) in writes where row.path == refused {
                    throw IndexError("refused: \(row.path)")
                }
                return try index.apply(writes)
            }
            func reserveRunIDs(_ count: Int) throws -> Range<Int64> { try index.reserveRunIDs(count) }
            func sampleEntryIDs() throws -> [Data: Int64] { try index.sampleEntryIDs() }
        }
        let h = try RecorderHarness()
        let cam = try h.index.addCamera(CameraRecord(name: "r", plugin: "demo", config: "{}", created90k: 0))
        let entry = try h.index.sampleEntryID(
            SampleEntryRecord(
                codec: "h264", rfc6381: "avc1", width: 1, height: 1, sampleRate: 0,
                channels: 0, timescale: 90000, extradata: Data(), box: Data([9])))
        let writer = IndexWriter(
            index: h.index, logger: TestEnvironment.logger,
            store: RefusesOnePath(index: h.index, refused: "recordings/r/3.mp4"))
        defer { writer.close() }
        var refs: [PendingRowID] = []
        for i in 0..<6 {
            refs.append(
                writer.insertSegment(
                    SegmentRecord(
                        cameraID: cam.id!, runID: 1, runSeq: i, start90k: Int64(i) * 90_000,
                        path: "recordings/r/\(i).mp4", videoEntryID: entry, audioEntryID: nil)))
        }
        writer.flush()
        #expect(refs.enumerated().allSatisfy { ($0.offset == 3) == ($0.element.value == nil) }, "\(refs.map(\.value))")
        #expect(
            try h.index.segments(cameraID: cam.id!).map(\.path) == [0, 1, 2, 4, 5].map { "recordings/r/\($0).mp4" })
        #expect(writer.droppedWrites.load(ordering: .relaxed) == 1)
    }

    @Test func recoveryRemovesAFileWhoseRowACrashKeptOut() throws {
        let root = TestEnvironment.tempDir("orphan")
        defer { TestEnvironment.cleanup(root) }
        let storage = StorageLayout(root: root)
        try storage.prepare()
        let index = try IndexDatabase(path: storage.indexPath)
        let cam = try index.addCamera(CameraRecord(name: "c", plugin: "demo", config: "{}", created90k: 0))
        let entry = try index.sampleEntryID(
            SampleEntryRecord(
                codec: "h264", rfc6381: "avc1", width: 1, height: 1, sampleRate: 0,
                channels: 0, timescale: 90000, extradata: Data(), box: Data([9])))
        let now = Time90k.now()
        // A segment of an hour ago with its row, and the next one's file whose row never came.
        let kept = storage.segmentPath(camera: "c", start90k: now - 3600 * 90_000, runID: 1, seq: 0)
        let lost = storage.segmentPath(camera: "c", start90k: now - 60 * 90_000, runID: 1, seq: 1)
        var row = SegmentRecord(
            cameraID: cam.id!, runID: 1, runSeq: 0, start90k: now - 3600 * 90_000, duration90k: 60 * 90_000,
            path: kept, videoEntryID: entry, audioEntryID: nil, state: .complete)
        row = try index.insertSegment(row)
        // A camera once named "c" (renamed since, its name taken again): its file in c's folder
        // has its row, under the other camera.
        let renamed = try index.addCamera(CameraRecord(name: "c-old", plugin: "demo", config: "{}", created90k: 0))
        let theirs = storage.segmentPath(camera: "c", start90k: now - 7200 * 90_000, runID: 2, seq: 0)
        _ = try index.insertSegment(
            SegmentRecord(
                cameraID: renamed.id!, runID: 2, runSeq: 0, start90k: now - 7200 * 90_000,
                duration90k: 60 * 90_000, path: theirs, videoEntryID: entry, audioEntryID: nil, state: .complete))
        for p in [kept, lost, theirs] {
            try FileManager.default.createDirectory(
                atPath: (storage.absolute(p) as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: storage.absolute(p), contents: Data([0, 0, 0, 8]))
        }
        let report = try Recovery.run(index: index, storage: storage, logger: TestEnvironment.logger, now: now)
        #expect(report.unindexedFiles == 1)
        #expect(FileManager.default.fileExists(atPath: storage.absolute(kept)))
        #expect(
            FileManager.default.fileExists(atPath: storage.absolute(theirs)),
            "another camera's file in the folder is not an orphan")
        #expect(!FileManager.default.fileExists(atPath: storage.absolute(lost)))
        #expect(try index.segments(cameraID: cam.id!).map(\.path) == [kept])
    }
}
