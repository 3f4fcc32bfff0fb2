import Foundation
import NVRIndex
import NVRPlayback
import NVRStorage
import NVRTime
import Synchronization
import TestSupport
import Testing

/// The index journal: rows an unreachable index (PostgreSQL) cannot take wait on disk, are
/// written in order once it answers, and what a killed process left is written at its next
/// start, once, unless another writer recorded the same camera meanwhile.
@Suite struct IndexJournalTests {
    /// The writer's seam made unreachable at will: every batch (and the empty one the writer
    /// asks first) fails as a PostgreSQL connection refused does.
    final class Unreachable: RecordingStore, @unchecked Sendable {
        let index: IndexDatabase
        let down = Atomic<Bool>(true)
        let refusedBatches = Atomic<Int>(0)
        init(_ index: IndexDatabase) { self.index = index }
        func apply(_ writes: [RecordingWrite]) throws -> [(PendingRowID, Int64)] {
            if down.load(ordering: .relaxed) {
                refusedBatches.add(1, ordering: .relaxed)
                throw IndexError("connection refused", retryable: true)
            }
            return try index.apply(writes)
        }
        func reserveRunIDs(_ count: Int) throws -> Range<Int64> { try index.reserveRunIDs(count) }
        func sampleEntryIDs() throws -> [Data: Int64] { try index.sampleEntryIDs() }
    }

    static func entry(_ box: UInt8) -> SampleEntryRecord {
        SampleEntryRecord(
            codec: "h264", rfc6381: "avc1", width: 1, height: 1, sampleRate: 0, channels: 0, timescale: 90000,
            extradata: Data(), box: Data([box]))
    }

    static func segment(camera: Int64, start: Int64, seconds: Int64 = 0, path: String, entry: Int64 = 0)
        -> SegmentRecord
    {
        SegmentRecord(
            cameraID: camera, runID: 1, runSeq: 0, start90k: start, duration90k: seconds * 90_000, path: path,
            frames: seconds > 0 ? 25 : 0, videoEntryID: entry, audioEntryID: nil)
    }

    @Test func batchesReadBackAsAppendedAndATornEndIsLeftOut() throws {
        let root = TestEnvironment.tempDir("journal")
        defer { TestEnvironment.cleanup(root) }
        let path = root + "/index.journal"
        let journal = IndexJournal(path: path)
        #expect(journal.isEmpty)
        let entryRef = PendingRowID()
        let seg = PendingRowID()
        let known = PendingRowID(41)
        let event = PendingRowID()
        let row = Self.segment(camera: 3, start: 900_000, path: "recordings/c/1.mp4")
        var done = Self.segment(camera: 3, start: 900_000, seconds: 2, path: "recordings/c/1.mp4")
        done.hasEvent = true
        let frames = SegmentFramesRecord(
            segmentID: 0, videoIndex: Data([1, 2, 3]), audioIndex: nil, fragmentIndex: Data([4]), audioStart90k: nil)
        let e = EventRecord(
            cameraID: 3, start90k: 900_000, type: "person", source: .detection, score: 0.9, preRoll90k: 0,
            postRoll90k: 0, box: [0.1, 0.2, 0.3, 0.4], zones: ["drive"])
        let first: [RecordingWrite] = [
            .insertSampleEntry(Self.entry(5), entryRef), .insertSegment(row, seg, entries: [entryRef]),
            .segmentProgress(seg, start90k: 900_000, duration90k: 45_000, bytes: 100, frames: 12, keyFrames: 1),
            .markEvent(known),
        ]
        let second: [RecordingWrite] = [
            .completeSegment(seg, done, frames, entries: [entryRef]), .saveEvent(e, event),
            .markEventSegments(cameraID: 3, start90k: 1, end90k: 2),
            .cameraState(CameraStateRecord(cameraID: 3, state: "streaming", reason: nil, since90k: 7)),
        ]
        try journal.append(first)
        try journal.append(second)
        #expect(journal.count == 8 && !journal.isEmpty)

        // In the same process: the very references the recorder holds.
        let same = try journal.read()
        #expect(same.torn == 0 && !same.damaged && same.writes.count == 8)
        guard case .insertSegment(let r0, let ref0, let entries0) = same.writes[1],
            case .completeSegment(let ref1, let r1, let f1, _) = same.writes[4],
            case .saveEvent(let e1, let eref) = same.writes[5], case .markEvent(let k) = same.writes[3]
        else {
            Issue.record("writes read back in another order: \(same.writes)")
            return
        }
        #expect(ref0 === seg && ref1 === seg && entries0.first === entryRef && eref === event)
        #expect(r0 == row && r1 == done && f1 == frames && e1 == e && k.value == 41)

        // In a new process: fresh references, one per row, shared by every write naming it.
        let cut = IndexJournal(path: path)
        let fresh = try cut.read().writes
        guard case .insertSegment(_, let a, let ea) = fresh[1], case .segmentProgress(let b, _, _, _, _, _) = fresh[2],
            case .completeSegment(let c, _, _, let ec) = fresh[4], case .insertSampleEntry(_, let en) = fresh[0]
        else {
            Issue.record("\(fresh)")
            return
        }
        #expect(a !== seg && a === b && b === c && a.value == nil)
        #expect(ea.first === en && ec.first === en)

        // A crash while appending: the half record is not read.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data([0x10, 0, 0, 0, 9, 9]))
        try handle.close()
        let torn = try IndexJournal(path: path).read()
        #expect(torn.writes.count == 8 && torn.torn == 6 && !torn.damaged)

        // A whole record whose bytes changed: what comes before it, and the journal is damaged.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let firstLength = Int(bytes[0]) | Int(bytes[1]) << 8 | Int(bytes[2]) << 16
        bytes[8 + firstLength + 8 + 3] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: path))
        let damaged = try IndexJournal(path: path).read()
        #expect(damaged.writes.count == 4 && damaged.damaged)

        try journal.clear()
        #expect(journal.isEmpty && journal.count == 0)
        #expect(try journal.read().writes.isEmpty)
    }

    /// A camera records two runs while the index is unreachable: nothing waits in memory or is
    /// given up, a stop returns at once, and once the index answers every row is written, in
    /// order, and the journal is empty.
    @Test func anUnreachableIndexKeepsTheRowsOnDiskAndGetsThemInOrderWhenItAnswers() throws {
        let h = try RecorderHarness()
        let clip = try IndexWriterTests().makeClip(h)
        let cam = try h.index.addCamera(CameraRecord(name: "j", plugin: "demo", config: "{}", created90k: 0))
        let store = Unreachable(h.index)
        let journal = IndexJournal(path: h.recorder.storage.indexJournalPath)
        let writer = IndexWriter(index: h.index, logger: TestEnvironment.logger, store: store, journal: journal)
        defer { writer.close() }
        writer.giveUpSeconds = 1
        try IndexWriterTests.record(clip, camera: cam, storage: h.recorder.storage, writer: writer)
        try IndexWriterTests.record(clip, camera: cam, storage: h.recorder.storage, writer: writer)
        writer.flush()  // journaled counts as done: a camera stopping during an outage does not wait
        Thread.sleep(forTimeInterval: 1.5)  // past giveUpSeconds: journaled rows are never given up
        #expect(!writer.flush(applied: 0.5), "the rows are not in the index yet")
        let recorded = writer.handedOverMark
        #expect(store.refusedBatches.load(ordering: .relaxed) >= 2, "the index was never asked")
        #expect(!journal.isEmpty && writer.journaledWrites >= 20, "\(writer.journaledWrites)")
        #expect(writer.backlog.writes == 0)
        #expect(try h.index.segments(cameraID: cam.id!).isEmpty)

        store.down.store(false, ordering: .relaxed)
        #expect(writer.flush(through: recorded, applied: 10))
        #expect(journal.isEmpty && writer.journaledWrites == 0)
        #expect(writer.droppedWrites.load(ordering: .relaxed) == 0)
        let segs = try h.completeSegments("j")
        #expect(segs.count == 10 && Set(segs.map(\.runID)).count == 2)
        for s in segs { try h.verify(s, videoCodec: "h264") }
        // Later writes go straight to the index again.
        let entry = try h.index.sampleEntryID(Self.entry(2))
        let after = writer.insertSegment(
            Self.segment(camera: cam.id!, start: 1, path: "recordings/j/after.mp4", entry: entry))
        writer.flush()
        #expect(after.value != nil && journal.isEmpty)
    }

    /// What a process killed during an outage left in its journal is written at the next start,
    /// before recovery (which would remove the files); written twice (a crash between the commit
    /// and emptying the journal), no row is doubled.
    @Test func aKilledProcesssJournalIsWrittenAtStartOnce() throws {
        let h = try RecorderHarness()
        let clip = try IndexWriterTests().makeClip(h)
        let cam = try h.index.addCamera(CameraRecord(name: "k", plugin: "demo", config: "{}", created90k: 0))
        let storage = h.recorder.storage
        let path = storage.indexJournalPath
        do {
            let store = Unreachable(h.index)
            let writer = IndexWriter(
                index: h.index, logger: TestEnvironment.logger, store: store, journal: IndexJournal(path: path))
            try IndexWriterTests.record(clip, camera: cam, storage: storage, writer: writer)
            writer.submit(
                .saveEvent(
                    EventRecord(
                        cameraID: cam.id!, start90k: 5, end90k: 9, type: "person", source: .detection,
                        preRoll90k: 0, postRoll90k: 0), PendingRowID()))
            writer.close()  // the index never answered: the rows stay in the journal
        }
        let left = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(!left.isEmpty)
        #expect(try h.index.segments(cameraID: cam.id!).isEmpty)

        let report = try JournalReplay.run(
            journal: IndexJournal(path: path), index: h.index, logger: TestEnvironment.logger)
        #expect(report.written > 0 && report.alreadyIn == 0 && report.refusedCameras.isEmpty)
        #expect(IndexJournal(path: path).isEmpty)
        // Recovery now finds a row for every file.
        let recovered = try Recovery.run(index: h.index, storage: storage, logger: TestEnvironment.logger)
        #expect(recovered.unindexedFiles == 0, "\(recovered)")
        let segs = try h.completeSegments("k")
        #expect(segs.count == 5)
        for s in segs { try h.verify(s, videoCodec: "h264") }

        try left.write(to: URL(fileURLWithPath: path))
        let again = try JournalReplay.run(
            journal: IndexJournal(path: path), index: h.index, logger: TestEnvironment.logger)
        #expect(again.alreadyIn == 6, "\(again)")
        #expect(try h.completeSegments("k").map(\.id) == segs.map(\.id))
        let events = try h.index.events(
            cameraID: cam.id!, start90k: 0, end90k: 100, type: nil, limit: 10)
        #expect(events.count == 1)
    }

    /// A journal with a record that does not check in its middle (a damaged disk): what comes
    /// before it is written, the file is set aside for a person rather than emptied, and camera
    /// states (stale after a restart) are not written.
    @Test func aDamagedJournalIsSetAsideAfterItsGoodPartIsWritten() throws {
        let h = try RecorderHarness()
        let cam = try h.index.addCamera(CameraRecord(name: "d", plugin: "demo", config: "{}", created90k: 0))
        let entry = try h.index.sampleEntryID(Self.entry(4))
        let path = h.root + "/damaged.journal"
        let journal = IndexJournal(path: path)
        try journal.append([
            .insertSegment(Self.segment(camera: cam.id!, start: 90_000, path: "d/1.mp4", entry: entry), PendingRowID()),
            .cameraState(CameraStateRecord(cameraID: cam.id!, state: "streaming", reason: nil, since90k: 5)),
        ])
        try journal.append([
            .insertSegment(Self.segment(camera: cam.id!, start: 180_000, path: "d/2.mp4", entry: entry), PendingRowID())
        ])
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let firstLength = Int(bytes[0]) | Int(bytes[1]) << 8 | Int(bytes[2]) << 16
        bytes[8 + firstLength + 8 + 5] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: path))
        let report = try JournalReplay.run(
            journal: IndexJournal(path: path), index: h.index, logger: TestEnvironment.logger)
        #expect(report.written == 1, "\(report)")
        #expect(try h.index.segments(cameraID: cam.id!).map(\.path) == ["d/1.mp4"])
        #expect(try h.index.cameraState(cameraID: cam.id!) == nil)
        let aside = try #require(report.damagedAside)
        #expect(try Data(contentsOf: URL(fileURLWithPath: aside)) == bytes)
        #expect(!FileManager.default.fileExists(atPath: path))
        // While it is there, recovery keeps files without rows (they may be its rows' files),
        // as the recorder asks when it starts.
        #expect(IndexJournal(path: path).setAsideCopies == [aside])
        let stray = h.recorder.storage.dayFolder(camera: "d", time90k: Time90k.now()) + "/stray.mp4"
        try FileManager.default.createDirectory(
            atPath: h.recorder.storage.absolute((stray as NSString).deletingLastPathComponent),
            withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: h.recorder.storage.absolute(stray), contents: Data([1]))
        let kept = try Recovery.run(
            index: h.index, storage: h.recorder.storage, logger: TestEnvironment.logger, keepUnindexedFiles: true)
        #expect(kept.unindexedFiles == 0 && FileManager.default.fileExists(atPath: h.recorder.storage.absolute(stray)))
        let removed = try Recovery.run(index: h.index, storage: h.recorder.storage, logger: TestEnvironment.logger)
        #expect(removed.unindexedFiles == 1, "the stray file is one recovery removes otherwise")
    }

    /// Journaled footage of a camera that another writer recorded meanwhile (another node took
    /// it while this one was cut off) is not written: never two writers in the index for one
    /// camera. Another camera's rows in the same journal are.
    @Test func aJournalOverlappingAnotherWritersFootageIsNotWritten() throws {
        let h = try RecorderHarness()
        let taken = try h.index.addCamera(CameraRecord(name: "t", plugin: "demo", config: "{}", created90k: 0))
        let other = try h.index.addCamera(CameraRecord(name: "o", plugin: "demo", config: "{}", created90k: 0))
        let entry = try h.index.sampleEntryID(Self.entry(3))
        var theirs = try h.index.insertSegment(
            Self.segment(camera: taken.id!, start: 10 * 90_000, path: "theirs.mp4", entry: entry))
        theirs.duration90k = 4 * 90_000
        try h.index.completeSegment(
            theirs,
            frames: SegmentFramesRecord(
                segmentID: theirs.id!, videoIndex: Data([1]), audioIndex: nil, fragmentIndex: Data([1]),
                audioStart90k: nil))
        let path = h.root + "/overlap.journal"
        let journal = IndexJournal(path: path)
        var writes: [RecordingWrite] = []
        for (camera, start) in [(taken.id!, Int64(12)), (other.id!, Int64(12))] {
            let ref = PendingRowID()
            let p = "recordings/\(camera)/mine.mp4"
            writes.append(
                .insertSegment(Self.segment(camera: camera, start: start * 90_000, path: p, entry: entry), ref))
            writes.append(
                .segmentProgress(ref, start90k: start * 90_000, duration90k: 90_000, bytes: 1, frames: 1, keyFrames: 1))
        }
        try journal.append(writes)
        let report = try JournalReplay.run(journal: journal, index: h.index, logger: TestEnvironment.logger)
        #expect(report.refusedCameras == [taken.id!], "\(report)")
        #expect(try h.index.segments(cameraID: taken.id!).map(\.path) == ["theirs.mp4"])
        #expect(try h.index.segments(cameraID: other.id!).map(\.path) == ["recordings/\(other.id!)/mine.mp4"])
        #expect(journal.isEmpty)
    }
}
