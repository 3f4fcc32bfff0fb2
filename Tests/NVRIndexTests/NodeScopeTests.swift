import Foundation
import NVRIndex
import TestSupport
import Testing

@testable import NVRIndexPostgres

/// Two recorder nodes on one PostgreSQL index: what concerns a node's own storage (recovery's
/// unfinished rows, retention, the integrity check, files without rows) is its own segments;
/// playback sees both nodes'.
@Suite(.tags(.system)) struct NodeScopeTests {
    @Test func eachNodeSeesItsOwnStorageAndEveryonesPlayback() throws {
        let server = try PostgresFixture()
        let location = try PostgresLocation(url: try server.makeDatabase())
        let a = try PostgresIndex(location: location, node: "a")
        let b = try PostgresIndex(location: location, node: "b")
        let cam = try #require(try a.addCamera(CameraRecord(name: "c", plugin: "demo", config: "{}", created90k: 0)).id)
        let entry = try a.sampleEntryID(
            SampleEntryRecord(
                codec: "h264", rfc6381: "avc1", width: 1, height: 1, sampleRate: 0, channels: 0, timescale: 90000,
                extradata: Data([1]), box: Data([1])))
        func segment(_ index: PostgresIndex, _ start: Int64, _ path: String) throws -> SegmentRecord {
            var s = try index.insertSegment(
                SegmentRecord(
                    cameraID: cam, runID: start, runSeq: 0, start90k: start, path: path, videoEntryID: entry,
                    audioEntryID: nil))
            s.duration90k = 90_000
            s.bytes = 10
            return s
        }
        let frames = SegmentFramesRecord(
            segmentID: 0, videoIndex: Data([1]), audioIndex: nil, fragmentIndex: Data([1]), audioStart90k: nil)
        var fa = frames
        let doneA = try segment(a, 1_000_000, "a1.mp4")
        fa.segmentID = doneA.id!
        try a.completeSegment(doneA, frames: fa)
        let writingA = try segment(a, 2_000_000, "a2.mp4")
        var fb = frames
        let doneB = try segment(b, 3_000_000, "b1.mp4")
        fb.segmentID = doneB.id!
        try b.completeSegment(doneB, frames: fb)
        let writingB = try segment(b, 4_000_000, "b2.mp4")

        #expect(try a.segments(cameraID: cam).map(\.node) == ["a", "a", "b", "b"], "stamped, and playback sees all")
        #expect(try a.segments(state: .writing).map(\.id) == [writingA.id])
        #expect(try b.segments(state: .writing).map(\.id) == [writingB.id])
        #expect(try a.allSegments().map(\.path) == ["a1.mp4", "a2.mp4"])
        #expect(try a.hasSegment(path: "a1.mp4") && !a.hasSegment(path: "b1.mp4"))
        #expect(try a.deletionCandidates(cameraID: nil, limit: 10).map(\.path) == ["a1.mp4"])
        #expect(try b.bytesByCamera() == [cam: 10], "b1.mp4 only (b2.mp4 has no bytes yet)")
        #expect(try a.timelineSpans(cameraID: cam, start90k: 0, end90k: .max).count == 4)
        // A completed row keeps its node (the recorder's copy of a row carries none).
        var bare = writingB
        bare.node = nil
        try b.completeSegment(
            bare,
            frames: {
                var f = frames
                f.segmentID = writingB.id!
                return f
            }())
        #expect(try b.allSegments().map(\.node) == ["b", "b"])
        // Without a node, one server on PostgreSQL: every row is its own.
        let single = try PostgresIndex(location: location)
        #expect(try single.allSegments().count == 4)
    }
}
