import Foundation
import NVRIndex
import TestSupport
import Testing

/// What every backend of the index must do alike: the same calls, the same answers, on SQLite
/// and on PostgreSQL (a real server per test).
@Suite(.tags(.system)) struct IndexStoreContractTests {
    static let base: Int64 = 161_579_317_120_429

    static func entry(_ box: UInt8) -> SampleEntryRecord {
        SampleEntryRecord(
            codec: "h264", rfc6381: "avc1.42c01e", width: 640, height: 360, sampleRate: 0, channels: 0,
            timescale: 90000, extradata: Data([1, box]), box: Data([0, 1, box]))
    }

    @Test(arguments: IndexBackend.allCases) func camerasAndTheirSettings(_ backend: IndexBackend) throws {
        try backend.withIndex { db in
            let generation = try db.camerasGeneration()
            let front = try db.addCamera(CameraRecord(name: "front", plugin: "rtsp", config: "{}", created90k: 1))
            let id = try #require(front.id)
            #expect {
                try db.addCamera(CameraRecord(name: "front", plugin: "rtsp", config: "{}", created90k: 2))
            } throws: { "\($0)".contains("a camera named 'front' already exists") }
            #expect(try db.camerasGeneration() == generation + 1)
            var changed = front
            changed.config = #"{"url":"rtsp://x"}"#
            changed.enabled = false
            try db.updateCamera(changed)
            #expect(try db.camera(named: "front") == changed)
            // Retired: out of the list, its row kept; added again under the same name, the
            // same row comes back (with its recordings).
            try db.retireCamera(id: id, at: 50)
            #expect(try db.cameras().isEmpty)
            #expect(try db.cameras(includeRemoved: true).map(\.removed90k) == [50])
            #expect(try db.camera(named: "front") == nil)
            let again = try db.addCamera(CameraRecord(name: "front", plugin: "onvif", config: "{}", created90k: 60))
            #expect(again.id == id && again.created90k == 1 && again.removed90k == nil)
            #expect(
                try db.camera(named: "front")?.removed90k == nil, "removed90k cleared in the row, not only the copy")
            #expect(try db.camerasGeneration() == generation + 4)

            #expect(try db.recordingSettings(cameraID: id) == CameraRecordingRecord(cameraID: id))
            let rec = CameraRecordingRecord(
                cameraID: id, mode: "events", schedule: "[]", tz: "Europe/Paris", motion: #"{"a":1}"#)
            try db.setRecordingSettings(rec)
            try db.setRecordingSettings(rec)
            #expect(try db.recordingSettings(cameraID: id) == rec)
            #expect(try db.camerasGeneration() == generation + 6)

            #expect(try db.retention(cameraID: id) == nil)
            let keep = CameraRetention(cameraID: id, continuousDays: 1.5, eventDays: nil, maxBytes: 1 << 40)
            try db.setRetention(keep)
            #expect(try db.retention(cameraID: id) == keep)

            try db.setSetting("k", "v")
            try db.setSetting("k", "w")
            #expect(try db.setting("k") == "w")
            try db.setSetting("k", nil)
            #expect(try db.setting("k") == nil)
            // Settings and limits together, or nothing: a camera that is not there refuses the
            // whole change.
            #expect(throws: (any Error).self) {
                try db.saveRetention(settings: [("k", "x")], cameras: [CameraRetention(cameraID: id + 1000)])
            }
            #expect(try db.setting("k") == nil)
            let both = CameraRetention(cameraID: id, continuousDays: 7)
            try db.saveRetention(settings: [("k", "y"), ("gone", nil)], cameras: [both])
            #expect(try db.setting("k") == "y" && db.retention(cameraID: id) == both)

            #expect(try db.pluginStatus(cameraID: id) == nil)
            try db.setPluginStatus(cameraID: id, json: "{}", at: 5)
            try db.setPluginStatus(cameraID: id, json: #"{"battery":80}"#, at: 6)
            #expect(try db.pluginStatus(cameraID: id).map { "\($0.json)@\($0.updated90k)" } == #"{"battery":80}@6"#)

            let slice = CardSliceRecord(
                cameraID: id, fileID: "f1", name: "GX01.MP4", start90k: 100, end90k: 200, bytes: 9, seen90k: 1)
            var cloud = slice
            cloud.fileID = "f2"
            cloud.onTimeline = false
            cloud.source = .cloud
            try db.replaceCardSlices(cameraID: id, with: [slice, cloud])
            #expect(try db.cardSlices(cameraID: id, start90k: 0, end90k: 1000).map(\.fileID) == ["f1"])
            let all = try db.cardSlices(cameraID: id, start90k: 0, end90k: 1000, includeOffTimeline: true)
            #expect(all.map(\.fileID) == ["f1", "f2"] && all[1].source == .cloud && !all[1].onTimeline)
            try db.replaceCardSlices(cameraID: id, with: [cloud])
            #expect(try db.cardSlices(cameraID: id, start90k: 0, end90k: 1000, includeOffTimeline: true).count == 1)

            // Names in byte order, as SQLite compares them (upper case first).
            let yard = try db.addCamera(CameraRecord(name: "Yard", plugin: "demo", config: "{}", created90k: 3))
            #expect(try db.cameras().map(\.name) == ["Yard", "front"])
            try db.removeCamera(id: id)
            try db.removeCamera(id: yard.id!)
            #expect(try db.cameras(includeRemoved: true).isEmpty)
        }
    }

    @Test(arguments: IndexBackend.allCases) func recordingWritesSegmentsAndTheTimeline(_ backend: IndexBackend) throws {
        try backend.withIndex { db in
            let cam = try #require(
                try db.addCamera(CameraRecord(name: "c", plugin: "demo", config: "{}", created90k: 0)).id)
            let runs = try db.reserveRunIDs(3)
            let next = try db.reserveRunIDs(1)
            #expect(runs.count == 3 && next.lowerBound == runs.upperBound)
            // One batch: a new sample entry, a segment naming it before it has an id, progress,
            // completion with its frame index, the camera's state.
            let entryRef = PendingRowID()
            let segRef = PendingRowID()
            let start = Self.base
            let row = SegmentRecord(
                cameraID: cam, runID: runs.lowerBound, runSeq: 0, start90k: start, path: "c/1.mp4", videoEntryID: 0,
                audioEntryID: nil)
            let inserted = try db.apply([
                .insertSampleEntry(Self.entry(1), entryRef),
                .insertSegment(row, segRef, entries: [entryRef]),
                .segmentProgress(segRef, start90k: start, duration90k: 90_000, bytes: 100, frames: 25, keyFrames: 1),
                .cameraState(CameraStateRecord(cameraID: cam, state: "recording", reason: nil, since90k: start)),
            ])
            #expect(inserted.count == 2)
            for (ref, id) in inserted { ref.publish(id) }
            let entryID = try #require(entryRef.value)
            #expect(try db.sampleEntryIDs() == [Self.entry(1).box: entryID])
            #expect(try db.sampleEntryID(Self.entry(1)) == entryID, "the same box is the same entry")
            #expect(try db.sampleEntry(id: entryID)?.extradata == Data([1, 1]))
            #expect(try db.cameraState(cameraID: cam)?.state == "recording")
            #expect(try db.segments(state: .writing).map(\.bytes) == [100])
            #expect(try db.newestLiveStart(cameraID: cam) == start)

            var whole = row
            whole.duration90k = 60 * 90_000
            whole.bytes = 5000
            whole.frames = 1500
            whole.videoEntryID = entryID
            let frames = SegmentFramesRecord(
                segmentID: 0, videoIndex: Data([1, 2, 3]), audioIndex: nil, fragmentIndex: Data([4]), audioStart90k: nil
            )
            _ = try db.apply([
                .markEvent(segRef), .completeSegment(segRef, whole, frames),
                .cameraState(CameraStateRecord(cameraID: cam, state: "offline", reason: "gone", since90k: start + 1)),
            ])
            let segID = try #require(segRef.value)
            let stored = try #require(try db.segments(cameraID: cam).first)
            #expect(
                stored.state == .complete && stored.hasEvent && stored.bytes == 5000 && stored.videoEntryID == entryID)
            #expect(try db.frames(segmentID: segID)?.videoIndex == Data([1, 2, 3]))
            #expect(try db.cameraState(cameraID: cam)?.reason == "gone")

            // A second segment inserted directly, and completed.
            var second = try db.insertSegment(
                SegmentRecord(
                    cameraID: cam, runID: runs.lowerBound, runSeq: 1, start90k: start + 60 * 90_000, path: "c/2.mp4",
                    videoEntryID: entryID, audioEntryID: nil))
            second.duration90k = 30 * 90_000
            second.bytes = 700
            try db.completeSegment(
                second,
                frames: SegmentFramesRecord(
                    segmentID: second.id!, videoIndex: Data([9]), audioIndex: Data([8]), fragmentIndex: Data([7]),
                    audioStart90k: 3))
            #expect(try db.frames(segmentID: second.id!)?.audioStart90k == 3)

            let spans = try db.timelineSpans(cameraID: cam, start90k: start + 30 * 90_000, end90k: start + 70 * 90_000)
            #expect(spans.map(\.start90k) == [start, start + 60 * 90_000])
            #expect(spans.map(\.hasEvent) == [true, false] && spans.map(\.bytes) == [5000, 700])
            #expect(
                try db.segments(cameraID: cam, start90k: start + 61 * 90_000, end90k: .max).map(\.id) == [second.id])
            #expect(try db.segments(cameraID: cam, start90k: 0, end90k: start).isEmpty)
            #expect(try db.hasRecordings(cameraID: cam, start90k: start + 10, end90k: start + 20))
            #expect(try !db.hasRecordings(cameraID: cam, start90k: start + 90 * 90_000, end90k: .max))
            #expect(try db.newestSegments(cameraID: cam, limit: 1).map(\.id) == [second.id])
            #expect(try db.oldestSegments(cameraID: cam, limit: 1).map(\.id) == [segID])
            #expect(try db.hasSegment(path: "c/2.mp4") && !db.hasSegment(path: "c/3.mp4"))
            #expect(try db.segmentID(path: "c/2.mp4") == second.id && db.segmentID(path: "c/3.mp4") == nil)
            #expect(
                try db.cameraID(segmentID: try #require(second.id)) == cam && db.cameraID(segmentID: 999_999) == nil)
            #expect(
                try db.storageSummary(cameraID: cam)
                    == CameraStorageSummary(segments: 2, bytes: 5700, oldest90k: start, newest90k: start + 90 * 90_000))
            #expect(try db.bytesByCamera() == [cam: 5700])
            #expect(try db.allSegments().map(\.id) == [segID, second.id])

            // Retention: continuous footage before event footage, never kept clips.
            #expect(try db.deletionCandidates(cameraID: cam, limit: 10).map(\.id) == [second.id, segID])
            #expect(try db.deletionCandidates(cameraID: nil, hasEvent: true, limit: 10).map(\.id) == [segID])
            let clip = try db.addProtectedClip(
                ProtectedClipRecord(
                    cameraID: cam, start90k: start + 70 * 90_000, end90k: start + 71 * 90_000, eventID: nil,
                    note: "car",
                    created90k: 1, createdBy: "admin"))
            #expect(try db.deletionCandidates(cameraID: cam, limit: 10).map(\.id) == [segID])
            #expect(try db.isProtected(cameraID: cam, start90k: start + 70 * 90_000 + 5, end90k: start + 80 * 90_000))
            #expect(
                try db.protectedClips().map(\.note) == ["car"] && db.protectedClip(id: clip.id!)?.createdBy == "admin")
            #expect(try db.removeProtectedClip(id: clip.id!) && !db.removeProtectedClip(id: clip.id!))
            try db.markEvent(segmentID: segID, false)
            #expect(try db.deletionCandidates(cameraID: cam, hasEvent: true, limit: 10).isEmpty)
            try db.markWriting(segmentID: second.id!)
            #expect(try db.segments(state: .writing).map(\.id) == [second.id])

            // Crash-safe deletion, and what was deleted.
            try db.markDeleting(segmentIDs: [segID])
            #expect(try db.segments(cameraID: cam).map(\.id) == [second.id])
            try db.removeSegments(ids: [segID])
            #expect(try db.frames(segmentID: segID) == nil)
            try db.recordDeleted(cameraID: cam, start..<(start + 100), reason: "retention", now: 1)
            try db.recordDeleted(cameraID: cam, (start + 150)..<(start + 200), reason: "user", now: 2)
            try db.recordDeleted(cameraID: cam, (start + 500_000)..<(start + 600_000), reason: "user", now: 3)
            #expect(
                try db.deletedRanges(cameraID: cam, start90k: 0, end90k: .max)
                    == [start..<(start + 200), (start + 500_000)..<(start + 600_000)])
            #expect { try db.removeCamera(id: cam) } throws: { "\($0)".contains("camera still has 1 segments") }

            // A batch naming a row whose insert never happened skips it; one that fails rolls
            // back whole.
            _ = try db.apply([.markEvent(PendingRowID()), .removeSegment(PendingRowID())])
            let dup = SegmentRecord(
                cameraID: cam, runID: 9, runSeq: 0, start90k: start, path: "c/2.mp4", videoEntryID: entryID,
                audioEntryID: nil)
            #expect(throws: (any Error).self) {
                try db.apply([
                    .cameraState(CameraStateRecord(cameraID: cam, state: "x", reason: nil, since90k: 9)),
                    .insertSegment(dup, PendingRowID()),
                ])
            }
            #expect(try db.cameraState(cameraID: cam)?.state == "offline", "the failed batch left nothing")
        }
    }

    @Test(arguments: IndexBackend.allCases) func eventsAndTheirReview(_ backend: IndexBackend) throws {
        try backend.withIndex { db in
            let a = try #require(
                try db.addCamera(CameraRecord(name: "a", plugin: "demo", config: "{}", created90k: 0)).id)
            let b = try #require(
                try db.addCamera(CameraRecord(name: "b", plugin: "demo", config: "{}", created90k: 0)).id)
            func add(_ cam: Int64, _ s: Int64, _ e: Int64?, _ type: String = "motion", zones: [String]? = nil) throws
                -> Int64
            {
                try #require(
                    try db.insertEvent(
                        EventRecord(
                            cameraID: cam, start90k: Self.base + s * 90_000, end90k: e.map { Self.base + $0 * 90_000 },
                            type: type, source: zones == nil ? .motion : .detection, score: zones == nil ? nil : 0.8,
                            preRoll90k: 0, postRoll90k: 90_000, box: zones == nil ? nil : [0.1, 0.2, 0.3, 0.4],
                            zones: zones)
                    ).id)
            }
            func ids(
                _ cam: Int64?, _ s: Int64, _ e: Int64, _ type: String? = nil, zone: String? = nil, limit: Int = 100
            )
                throws -> [Int64]
            {
                try db.events(
                    cameraID: cam, start90k: Self.base + s * 90_000, end90k: Self.base + e * 90_000, type: type,
                    zone: zone, limit: limit
                ).map { $0.id! }
            }
            let long = try add(a, 0, 3600)
            let person = try add(a, 4000, 4010, "person", zones: ["porch", "drive way"])
            let open = try add(b, 6000, nil)
            #expect(try ids(a, 1800, 1801) == [long])
            #expect(try ids(nil, -100, 10_000) == [long, person, open])
            #expect(try ids(nil, -100, 10_000, "person") == [person])
            #expect(try ids(nil, -100, 10_000, zone: "drive way") == [person])
            #expect(try ids(nil, -100, 10_000, zone: "drive") == [])
            #expect(try ids(nil, -100, 10_000, limit: 2) == [person, open])
            #expect(try ids(b, 9000, 9001) == [open])
            let stored = try #require(try db.event(id: person))
            #expect(
                stored.box == [0.1, 0.2, 0.3, 0.4] && stored.zones == ["porch", "drive way"]
                    && stored.source == .detection)

            // The recorder's writes: an event saved, then updated through its pending id; the
            // segments under it marked.
            let ref = PendingRowID()
            var e = EventRecord(
                cameraID: b, start90k: Self.base, type: "doorbell", source: .plugin, preRoll90k: 0, postRoll90k: 0)
            for (r, id) in try db.apply([.saveEvent(e, ref)]) { r.publish(id) }
            e.end90k = Self.base + 5
            _ = try db.apply([.saveEvent(e, ref)])
            #expect(try db.event(id: ref.value!)?.end90k == Self.base + 5)

            #expect(try db.closeOpenEvents() == 1)
            #expect(try db.event(id: open)?.end90k == Self.base + 6000 * 90_000)

            // Review marks per user; events gone are skipped.
            try db.markReviewed(user: "ann", eventIDs: [long, person, 999_999], at: 1)
            try db.markReviewed(user: "ann", eventIDs: [long], at: 2)
            #expect(try db.reviewedEvents(user: "ann", among: [long, person, open]) == [long, person])
            #expect(try db.reviewedEvents(user: "bob", among: [long]).isEmpty)
            #expect(try db.reviewedUntil(user: "ann") == nil)
            try db.setReviewedUntil(user: "ann", 100)
            try db.setReviewedUntil(user: "ann", 50)
            #expect(try db.reviewedUntil(user: "ann") == 100, "never moves back")

            // Retention's clean-up: ended events whose clip is gone, but not one a kept clip names.
            try db.addProtectedClip(
                ProtectedClipRecord(
                    cameraID: a, start90k: Self.base, end90k: Self.base + 10, eventID: long, note: "", created90k: 0,
                    createdBy: "admin"))
            #expect(try db.deleteEvents(cameraID: a, clipEndingBefore: nil) == 1)
            #expect(try db.event(id: person) == nil && db.event(id: long) != nil)
            #expect(try db.deleteEvent(id: long) && !db.deleteEvent(id: long))
        }
    }

    @Test(arguments: IndexBackend.allCases) func usersSessionsTokensAndTheAuditLog(_ backend: IndexBackend) throws {
        try backend.withIndex { db in
            let admin = try db.addUser(UserRecord(name: "Admin", passwordHash: "h", role: "admin", created90k: 1))
            #expect("names differ by more than case") {
                try db.addUser(UserRecord(name: "admin", passwordHash: "h", role: "viewer", created90k: 1))
            } throws: { "\($0)".contains("already exists") }
            var viewer = try db.addUser(
                UserRecord(name: "bob", passwordHash: "h", role: "viewer", cameras: #"["a"]"#, ptz: true, created90k: 2)
            )
            #expect(try db.user(named: "ADMIN")?.id == admin.id)
            _ = try db.addUser(UserRecord(name: "Zoe", passwordHash: "h", role: "viewer", created90k: 3))
            #expect(try db.users().map(\.name) == ["Admin", "bob", "Zoe"], "ordered without case")
            #expect(try db.userCount() == 3)
            viewer.talk = true
            viewer.cameras = nil
            try db.updateUser(viewer)
            #expect(try db.user(id: viewer.id!) == viewer)
            #expect("the last admin stays") { try db.removeUser(id: admin.id!) } throws: {
                "\($0)".contains("last admin")
            }

            let session = try db.addSession(
                SessionRecord(
                    tokenHash: Data([1, 2]), userID: viewer.id!, csrf: "c", created90k: 10, expires90k: 100,
                    address: "127.0.0.1", userAgent: nil))
            #expect(try db.session(tokenHash: Data([1, 2]), at: 50)?.1.name == "bob")
            #expect(try db.session(tokenHash: Data([1, 2]), at: 100) == nil, "expired")
            try db.touchSession(id: session.id!, at: 60, expires90k: 200)
            #expect(try db.session(tokenHash: Data([1, 2]), at: 150)?.0.lastSeen90k == 60)
            _ = try db.addSession(
                SessionRecord(
                    tokenHash: Data([3]), userID: admin.id!, csrf: "d", created90k: 10, expires90k: 20, address: nil,
                    userAgent: "curl"))
            #expect(try db.sessions().count == 2 && db.sessions(userID: admin.id).count == 1)
            #expect(try db.removeExpiredSessions(at: 20) == 1)
            #expect(try db.removeSessions(userID: viewer.id!) == 1 && db.sessions().isEmpty)

            let token = try db.addToken(
                APITokenRecord(name: "ha", tokenHash: Data([9]), userID: viewer.id!, created90k: 1))
            #expect(try db.token(hash: Data([9]))?.0.name == "ha")
            try db.touchToken(id: token.id!, at: 77)
            #expect(try db.tokens(userID: viewer.id).map(\.lastUsed90k) == [77])
            #expect(try db.removeToken(id: token.id!) && db.tokens().isEmpty)

            for i in 1...5 {
                try db.addAudit(
                    AuditRecord(
                        time90k: Int64(i), user: "Admin", action: "a\(i)", target: nil, detail: nil, address: nil))
            }
            let newest = try db.audit(limit: 2)
            #expect(newest.map(\.action) == ["a5", "a4"])
            #expect(try db.audit(limit: 10, before: newest[1].id).map(\.action) == ["a3", "a2", "a1"])

            // A user's sessions and tokens go with them.
            _ = try db.addToken(APITokenRecord(name: "t", tokenHash: Data([8]), userID: viewer.id!, created90k: 1))
            try db.removeUser(id: viewer.id!)
            #expect(try db.tokens().isEmpty && db.user(named: "bob") == nil)
        }
    }
}
