import Foundation
import Testing

@testable import NVRIndex

@Suite struct IndexDatabaseTests {
    func withIndex(_ body: (IndexDatabase) throws -> Void) throws {
        let dir = NSTemporaryDirectory() + "idx-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try body(try IndexDatabase(path: dir + "/index.sqlite"))
    }

    @Test func camerasAddListRemove() throws {
        try withIndex { db in
            let cam = try db.addCamera(CameraRecord(name: "front", plugin: "rtsp", config: "{}", created90k: 1))
            #expect(cam.id != nil)
            #expect(throws: IndexError.self) {
                try db.addCamera(CameraRecord(name: "front", plugin: "rtsp", config: "{}", created90k: 1))
            }
            #expect(try db.cameras().map(\.name) == ["front"])
            try db.removeCamera(id: cam.id!)
            #expect(try db.cameras().isEmpty)
        }
    }

    @Test func segmentsLifecycleAndRangeQuery() throws {
        try withIndex { db in
            let cam = try db.addCamera(CameraRecord(name: "c", plugin: "demo", config: "{}", created90k: 0))
            let entry = try db.sampleEntryID(
                SampleEntryRecord(
                    codec: "h264", rfc6381: "avc1.42c01e", width: 640, height: 360,
                    sampleRate: 0, channels: 0, timescale: 90000, extradata: Data([1]), box: Data([1, 2, 3])))
            // The same sample entry is shared, not duplicated.
            #expect(
                try db.sampleEntryID(
                    SampleEntryRecord(
                        codec: "h264", rfc6381: "x", width: 0, height: 0, sampleRate: 0,
                        channels: 0, timescale: 90000, extradata: Data(), box: Data([1, 2, 3]))) == entry)
            let run = try db.nextRunID()
            var s = try db.insertSegment(
                SegmentRecord(
                    cameraID: cam.id!, runID: run, runSeq: 0, start90k: 900_000, path: "a.mp4",
                    videoEntryID: entry, audioEntryID: nil))
            #expect(try db.segments(state: .writing).count == 1)
            s.duration90k = 90_000 * 60
            s.frames = 1500
            try db.completeSegment(
                s,
                frames: SegmentFramesRecord(
                    segmentID: s.id!, videoIndex: Data([1, 0]), audioIndex: nil,
                    fragmentIndex: Data([1, 1]), audioStart90k: nil))
            #expect(try db.segments(state: .writing).isEmpty)
            #expect(try db.segments(cameraID: cam.id!, start90k: 0, end90k: 900_000).isEmpty)  // ends before
            #expect(
                try db.segments(cameraID: cam.id!, start90k: 900_000 + 90_000, end90k: 900_000 + 2 * 90_000).count == 1)
            #expect(try db.nextRunID() == run + 1)
            let sum = try db.storageSummary(cameraID: cam.id!)
            #expect(sum.segments == 1 && sum.oldest90k == 900_000)
            #expect(throws: IndexError.self) { try db.removeCamera(id: cam.id!) }  // still has segments
            try db.markDeleting(segmentIDs: [s.id!])
            try db.removeSegments(ids: [s.id!])
            #expect(try db.frames(segmentID: s.id!) == nil)
        }
    }
}
