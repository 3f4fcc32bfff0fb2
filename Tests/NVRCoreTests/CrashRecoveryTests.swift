import Foundation
import NVRIndex
import NVRPlayback
import NVRStorage
import NVRTime
import TestSupport
import Testing

/// `kill -9` of `nvr serve` mid-segment, then a restart: the segment is recovered, plays,
/// and index and files agree, with at most ~2 s lost before the kill.
@Suite(.serialized, .tags(.system)) struct CrashRecoveryTests {
    @Test func killDashNineMidSegmentThenRestart() throws {
        let cam = try RTSPCameraFixture()
        let root = TestEnvironment.tempDir("crash")
        defer { TestEnvironment.cleanup(root) }
        let config = try writeConfig(root: root, plugins: TestEnvironment.buildDir, segmentSeconds: 60)
        let add = try runProcess(
            TestEnvironment.nvrExecutable,
            ["camera", "add", "cam", "--plugin", "rtsp", "--url", cam.url, "--config", config])
        #expect(add.status == 0, "\(add.stderr)")
        #expect(
            try runProcess(TestEnvironment.nvrExecutable, ["retention", "set", "--min-free", "0%", "--config", config])
                .status == 0)
        let storage = StorageLayout(root: root + "/Storage")
        let index = try IndexDatabase(path: storage.indexPath)
        let camID = try #require(try index.camera(named: "cam")?.id)

        let log = root + "/serve.log"
        let serve = try startServe(config, log: log)
        // Wait until a segment has been written for a while (progress is saved every 5 s).
        let writing = TestEnvironment.wait(timeout: 30) {
            ((try? index.segments(cameraID: camID)) ?? []).contains {
                $0.state == .writing && $0.duration90k >= 5 * 90_000
            }
        }
        #expect(writing, "no segment in progress; log: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        Thread.sleep(forTimeInterval: 1.7)  // mid-fragment, mid-segment
        kill(serve.processIdentifier, SIGKILL)
        let killed = Time90k.now()
        serve.waitUntilExit()
        let crashed = try #require(try index.segments(cameraID: camID).first)
        #expect(crashed.state == .writing)

        // Restart: recovery finishes the segment before recording resumes.
        let again = try startServe(config, log: log)
        #expect(TestEnvironment.wait(timeout: 20) { (try? index.segments(cameraID: camID).first?.state) == .complete })
        #expect(TestEnvironment.wait(timeout: 20) { ((try? index.segments(cameraID: camID)) ?? []).count >= 2 })
        // While it records: a second server is refused, db check passes (the live segment is not
        // a crash leftover), and --repair refuses to touch it.
        let second = try runProcess(TestEnvironment.nvrExecutable, ["serve", "--no-demo", "--config", config])
        #expect(
            second.status != 0 && second.stderr.contains("another nvr serve is already recording"), "\(second.stderr)")
        let live = try runProcess(TestEnvironment.nvrExecutable, ["db", "check", "--config", config])
        #expect(live.status == 0, "\(live.stdout)")
        let repair = try runProcess(TestEnvironment.nvrExecutable, ["db", "check", "--repair", "--config", config])
        #expect(repair.status != 0 && repair.stderr.contains("stop it before --repair"))
        kill(again.processIdentifier, SIGINT)
        again.waitUntilExit()
        #expect(again.terminationStatus == 0)
        let text = try String(contentsOfFile: log, encoding: .utf8)
        #expect(text.contains("recovery: finished segment"))

        let segs = try index.segments(cameraID: camID)
        #expect(segs.allSatisfy { $0.state == .complete })
        let recovered = segs[0]
        #expect(recovered.id == crashed.id)
        // ≤ 2 s lost before the kill (fragments are written at least once a second).
        let lost = Double(killed - recovered.end90k) / 90_000
        #expect(lost <= 2.0 && lost >= 0, "lost \(lost) s")
        // The recovered file plays and matches its row and frame index.
        let path = storage.absolute(recovered.path)
        let probed = try ffprobeStreams(path)
        #expect(probed.first?.frames == recovered.frames)
        let frames = try FrameIndex.decode(try #require(try index.frames(segmentID: recovered.id!)).videoIndex)
        #expect(frames.count == recovered.frames)
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
        #expect(size == Int(recovered.bytes))
        // Index and files agree: every row has its file and every file has its row.
        let files = Set(
            FileManager.default.enumerator(atPath: storage.recordingsDir)!.compactMap { $0 as? String }
                .filter { $0.hasSuffix(".mp4") }.map { "recordings/" + $0 })
        #expect(files == Set(segs.map(\.path)))
        // The restart began a new run after a gap.
        #expect(Set(segs.map(\.runID)).count == 2)
    }

    @Test func recoveryDropsRowsWhoseFileNeverGotAnyFragment() throws {
        let root = TestEnvironment.tempDir("recover")
        defer { TestEnvironment.cleanup(root) }
        let storage = StorageLayout(root: root)
        try storage.prepare()
        let index = try IndexDatabase(path: storage.indexPath)
        let cam = try index.addCamera(CameraRecord(name: "c", plugin: "demo", config: "{}", created90k: 0))
        let entry = try index.sampleEntryID(
            SampleEntryRecord(
                codec: "h264", rfc6381: "avc1", width: 1, height: 1, sampleRate: 0,
                channels: 0, timescale: 90000, extradata: Data(), box: Data([9])))
        // A row whose file was never created, and one whose file has only half a header.
        _ = try index.insertSegment(
            SegmentRecord(
                cameraID: cam.id!, runID: 1, runSeq: 0, start90k: 0, path: "recordings/c/a.mp4",
                videoEntryID: entry, audioEntryID: nil))
        _ = try index.insertSegment(
            SegmentRecord(
                cameraID: cam.id!, runID: 1, runSeq: 1, start90k: 10, path: "recordings/c/b.mp4",
                videoEntryID: entry, audioEntryID: nil))
        try FileManager.default.createDirectory(atPath: storage.recordingsDir + "/c", withIntermediateDirectories: true)
        try Data([0, 0, 0, 24, 0x66, 0x74]).write(to: URL(fileURLWithPath: storage.absolute("recordings/c/b.mp4")))
        let report = try Recovery.run(index: index, storage: storage, logger: TestEnvironment.logger)
        #expect(report.dropped == 2)
        #expect(try index.segments(cameraID: cam.id!).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: storage.absolute("recordings/c/b.mp4")))
    }
}
