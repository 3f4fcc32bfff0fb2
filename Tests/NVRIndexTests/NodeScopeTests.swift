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
        #expect(try a.segmentID(path: "a1.mp4") == doneA.id && a.segmentID(path: "b1.mp4") == nil)
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

    /// The leases' rules as the index applies them: tokens, fencing of recording writes, rows a
    /// node does not hold, a node leaving.
    @Test func leasesFenceTheRecordingWrites() throws {
        let server = try PostgresFixture()
        let location = try PostgresLocation(url: try server.makeDatabase())
        let a = try PostgresIndex(location: location, node: "a")
        let b = try PostgresIndex(location: location, node: "b")
        try a.registerNode("a", advertiseURL: nil, storageRoot: "/x", storageID: "1")
        try b.registerNode("b", advertiseURL: nil, storageRoot: "/y", storageID: "2")
        let cam = try #require(try a.addCamera(CameraRecord(name: "c", plugin: "demo", config: "{}", created90k: 0)).id)
        let entry = try a.sampleEntryID(
            SampleEntryRecord(
                codec: "h264", rfc6381: "avc1", width: 1, height: 1, sampleRate: 0, channels: 0, timescale: 90000,
                extradata: Data([1]), box: Data([1])))
        func row(_ path: String) -> SegmentRecord {
            SegmentRecord(
                cameraID: cam, runID: 1, runSeq: 0, start90k: 1000, path: path, videoEntryID: entry, audioEntryID: nil)
        }
        let token = try #require(try a.acquireLease(cameraID: cam, node: "a", leaseSeconds: 30))
        #expect(try b.acquireLease(cameraID: cam, node: "b", leaseSeconds: 30) == nil, "held by a")
        // a holds it with that token: its writes land; with another token (a lease it lost and
        // took again, say) they do not.
        a.fence.set([cam: token])
        #expect(try a.apply([.insertSegment(row("a1.mp4"), PendingRowID())]).count == 1)
        a.fence.set([cam: token + 100])
        #expect(try a.apply([.insertSegment(row("a2.mp4"), PendingRowID())]).isEmpty)
        // b, without the lease, cannot write the camera either.
        b.fence.set([:])
        #expect(try b.apply([.insertSegment(row("b1.mp4"), PendingRowID())]).isEmpty)
        #expect(try a.segments(cameraID: cam).map(\.path) == ["a1.mp4"])
        // A heartbeat renews only the leases the node holds, and drops its rows it does not.
        #expect(try a.heartbeat("a", holding: [cam: token], leaseSeconds: 30) == [cam: token])
        #expect(try a.heartbeat("a", holding: [:], leaseSeconds: 30).isEmpty)
        #expect(try a.leases().isEmpty, "a's row it no longer holds is gone")
        let taken = try #require(try b.acquireLease(cameraID: cam, node: "b", leaseSeconds: 30))
        #expect(taken > token, "tokens only grow")
        b.fence.set([cam: taken])
        #expect(try b.apply([.insertSegment(row("b2.mp4"), PendingRowID())]).count == 1)
        // A lease that ran out while nobody took it (PostgreSQL was away) is renewed by its
        // token; once another node has taken it, it is not.
        #expect(try b.heartbeat("b", holding: [cam: taken], leaseSeconds: 0.05) == [cam: taken])
        Thread.sleep(forTimeInterval: 0.3)
        #expect(try a.leases().isEmpty, "expired")
        #expect(try b.heartbeat("b", holding: [cam: taken], leaseSeconds: 0.05) == [cam: taken], "nobody took it")
        Thread.sleep(forTimeInterval: 0.3)
        let takenByA = try #require(try a.acquireLease(cameraID: cam, node: "a", leaseSeconds: 30))
        #expect(try b.heartbeat("b", holding: [cam: taken], leaseSeconds: 30).isEmpty, "a took it")
        #expect(try a.leases().map(\.token) == [takenByA])
        // While a camera recorded through an outage waits for its lease to be confirmed, no
        // batch is applied (it would refuse that camera's rows and drop them): the writer waits.
        b.fence.set([cam: taken], awaiting: [cam])
        #expect { try b.apply([.insertSegment(row("b3.mp4"), PendingRowID())]) } throws: {
            IndexError.isRetryable($0) && "\($0)".contains("waiting for PostgreSQL to confirm")
        }
        b.fence.set([cam: taken])
        #expect(try b.apply([.insertSegment(row("b3.mp4"), PendingRowID())]).isEmpty, "refused: a holds it")
        try a.releaseLease(cameraID: cam, node: "a", token: takenByA)
        // A node registering again (a restart) starts with no lease; leaving, it is not live.
        try b.registerNode("b", advertiseURL: nil, storageRoot: "/y", storageID: "2")
        #expect(try a.leases().isEmpty)
        try b.leaveNode("b")
        #expect(try a.nodes().first { $0.name == "b" }.map { $0.heartbeatAge > 60 } == true)
    }

    /// The cluster-wide job that closes events left open on cameras no node records (a node
    /// that died): one node at a time, under an advisory lock.
    @Test func eventsNobodyRecordsAreClosedByOneNodeAtATime() throws {
        let server = try PostgresFixture()
        let url = try server.makeDatabase()
        let location = try PostgresLocation(url: url)
        let a = try PostgresIndex(location: location, node: "a")
        try a.registerNode("a", advertiseURL: nil, storageRoot: "/x", storageID: "1")
        let held = try #require(
            try a.addCamera(CameraRecord(name: "held", plugin: "demo", config: "{}", created90k: 0)).id)
        let orphan = try #require(
            try a.addCamera(CameraRecord(name: "orphan", plugin: "demo", config: "{}", created90k: 0)).id)
        _ = try #require(try a.acquireLease(cameraID: held, node: "a", leaseSeconds: 30))
        var ids: [Int64] = []
        for cam in [held, orphan] {
            let e = try a.insertEvent(
                EventRecord(
                    cameraID: cam, start90k: 1000, type: "motion", source: .motion, preRoll90k: 0, postRoll90k: 0))
            ids.append(try #require(e.id))
        }
        func open() throws -> [Int64] { try ids.filter { try a.event(id: $0)?.end90k == nil } }
        #expect(try open() == ids)
        // While another node has the job's turn (its advisory lock), this one skips.
        let database = try #require(url.split(separator: "/").last.map(String.init))
        let other = Process()
        other.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        other.arguments = [
            "-X", "-q", "-h", server.folder, "-p", String(server.port), "-U", server.user, "-d", database, "-c",
            "SELECT pg_advisory_lock(2, 1), pg_sleep(4)",
        ]
        try other.run()
        defer { other.waitUntilExit() }
        let lockTaken = TestEnvironment.wait(timeout: 3) {
            (try? server.psql(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted", database: database))?
                .stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1"
        }
        #expect(lockTaken)
        #expect(try a.closeEventsNobodyRecords() == nil)
        #expect(try open() == ids)
        other.waitUntilExit()
        // Its turn: the camera no node records gets its event closed; the recorded one's stays open.
        #expect(try a.closeEventsNobodyRecords() == 1)
        #expect(try open() == [ids[0]])
    }

    /// One serve per node name, and none without a node beside nodes (or nodes beside it).
    @Test func serveLocks() throws {
        let server = try PostgresFixture()
        let location = try PostgresLocation(url: try server.makeDatabase())
        let a = try PostgresIndex(location: location, node: "a")
        let b = try PostgresIndex(location: location, node: "b")
        try a.holdServeLock()
        try b.holdServeLock()
        #expect { try PostgresIndex(location: location, node: "a").holdServeLock() } throws: {
            "\($0)".contains("already runs as node a")
        }
        #expect { try PostgresIndex(location: location).holdServeLock() } throws: {
            "\($0)".contains("another nvr serve already uses the index")
        }
        a.releaseServeLock()
        b.releaseServeLock()
        let single = try PostgresIndex(location: location)
        try single.holdServeLock()
        #expect(throws: IndexError.self) { try PostgresIndex(location: location, node: "c").holdServeLock() }
        single.releaseServeLock()
    }
}
