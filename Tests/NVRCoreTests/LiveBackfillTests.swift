import Foundation
import NVRIndex
import NVRMedia
import NVRPlayback
import NVRRecorder
import NVRStorage
import NVRTime
import TestSupport
import Testing

/// The live view of a camera no one watches keeps nothing (issue 35); a viewer who comes still
/// starts at once, at the newest key frame, from the segment being written. A captured camera
/// conversation (320×180 H.264 with a 4-s GOP, and AAC: a fuzz seed) goes through two recording gates, in-process: one
/// whose live view is watched all along, and one that records with fragments of 0.1 s (so the
/// GOP lies partly in the file, partly in the fragment not yet written) and is watched only
/// from the middle of the GOP.
@Suite struct LiveBackfillTests {
    struct Packet {
        var stream: Int
        var pts: Int64
        var dts: Int64
        var duration: Int64
        var isKey: Bool
        var data: [UInt8]
    }

    static func capture() throws -> (streams: [StreamDescription], packets: [Packet]) {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/fuzz/rtsp-session/gstreamer-h264-aac-gop4").path
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)).dropFirst())
        let client = try RTSPClient(replaying: bytes, chunk: 4096)
        var packets: [Packet] = []
        while true {
            do {
                try client.read { p in
                    packets.append(
                        Packet(
                            stream: p.stream, pts: p.pts, dts: p.dts, duration: p.duration, isKey: p.isKey,
                            data: Array(p.data)))
                }
            } catch { break }
        }
        return (client.streams, packets)
    }

    final class Gate {
        let root = TestEnvironment.tempDir("backfill")
        let gate: RecordingGate
        let segmenter: Segmenter
        let writer: IndexWriter
        init(live: LiveHub, mode: RecordingMode) throws {
            let storage = StorageLayout(root: root)
            try storage.prepare()
            let index = try IndexDatabase(path: storage.indexPath)
            let camera = try index.addCamera(CameraRecord(name: "cam", plugin: "rtsp", config: "{}", created90k: 0))
            writer = IndexWriter(index: index, logger: TestEnvironment.logger)
            var settings = Segmenter.Settings(segmentSeconds: 60)
            settings.maxFragment90k = 9000
            segmenter = Segmenter(
                camera: camera, storage: storage, writer: writer, settings: settings, logger: TestEnvironment.logger)
            // No motion, so no clip: in events mode the footage stays in the pre-roll buffer.
            var motion = MotionSettings()
            motion.enabled = .off
            let recording = RecordingSettings(mode: mode, motion: motion)
            let events = EventTracker(
                camera: camera, writer: writer, logger: TestEnvironment.logger, preRoll90k: recording.preRoll90k,
                postRoll90k: recording.postRoll90k)
            gate = RecordingGate(
                camera: camera, writer: writer, segmenter: segmenter, tracker: events, settings: recording,
                logger: TestEnvironment.logger, live: live)
        }
        /// Bytes in the segment files so far.
        var segmentBytes: Int {
            let files = FileManager.default.enumerator(atPath: root)?.compactMap { $0 as? String } ?? []
            return files.filter { $0.hasSuffix(".mp4") }.reduce(0) {
                $0 + ((try? FileManager.default.attributesOfItem(atPath: root + "/" + $1)[.size] as? Int) ?? 0)
            }
        }
        func append(_ p: Packet) throws {
            try p.data.withUnsafeBytes {
                try gate.append(
                    stream: p.stream, pts: p.pts, dts: p.dts, duration: p.duration, isKey: p.isKey, data: $0)
            }
        }
        deinit {
            try? gate.end()
            writer.flush()
            TestEnvironment.cleanup(root)
        }
    }

    /// Everything a new viewer of `hub` is sent now: the stream, then each frame kept.
    static func drain(_ hub: LiveHub) async -> [String] {
        var cursor = LiveHub.Cursor()
        var out: [String] = []
        for _ in 0...hub.keptFrames {
            switch await hub.next(&cursor) {
            case .stream(let s): out.append("stream \(s.codec) \(s.width)x\(s.height) \(s.initSegment.count) B")
            case .frame(let fragment, let isKey): out.append("\(isKey ? "key" : "frame") \(fragment.hashValue)")
            case .skipped: out.append("skipped")
            case nil: out.append("nil")
            }
        }
        return out
    }

    @Test(arguments: [RecordingMode.continuous, .events])
    func aViewerWhoComesMidGOPGetsTheSameFramesAsOneWhoWatchedAllAlong(mode: RecordingMode) async throws {
        let (streams, packets) = try Self.capture()
        let video = packets.indices.filter { packets[$0].stream == 0 }
        #expect(packets[video[0]].isKey && video.count >= 10, "a key frame, then enough frames")
        let watched = LiveHub(keepAlways: true)
        let reference = try Gate(live: watched, mode: .off)
        let unwatched = LiveHub(lingerSeconds: 0)
        let recorded = try Gate(live: unwatched, mode: mode)
        try reference.gate.begin(streams: streams)
        try recorded.gate.begin(streams: streams)

        // Up to the middle of the GOP: the recorded camera's live view keeps nothing.
        let cut = video[video.count * 2 / 3]
        for p in packets[..<cut] {
            try reference.append(p)
            try recorded.append(p)
        }
        #expect(unwatched.keptFrames == 0 && unwatched.keptBytes == 0)
        #expect(watched.keptFrames > 30)
        // Where the GOP so far is: written (most of it) in the segment file, or in the buffer.
        #expect(recorded.segmenter.isRecording == (mode == .continuous))
        let written = recorded.segmentBytes
        #expect(mode == .continuous ? written > watched.keptBytes / 2 : written == 0, "\(written) bytes in the file")

        // A viewer comes; the next frame brings the GOP so far along with it.
        unwatched.viewers.add(1, ordering: .relaxed)
        for p in packets[cut...] {
            try reference.append(p)
            try recorded.append(p)
        }
        #expect(unwatched.keptFrames == watched.keptFrames)
        #expect(unwatched.keptBytes == watched.keptBytes)
        let seen = await Self.drain(unwatched)
        let expected = await Self.drain(watched)
        #expect(seen == expected)
        #expect(seen.count > 5 && seen.first?.hasPrefix("stream avc1") == true && seen[1].hasPrefix("key"), "\(seen)")

        // Gone, and no linger (0 s here): nothing kept again.
        unwatched.viewers.subtract(1, ordering: .relaxed)
        try recorded.append(packets[video.last!])
        #expect(unwatched.keptFrames == 0 && unwatched.keptBytes == 0)
    }
}
