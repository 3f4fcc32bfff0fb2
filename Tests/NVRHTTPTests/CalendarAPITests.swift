import Foundation
import NVRHTTP
import NVRIndex
import NVRPlayback
import NVRTime
import TestSupport
import Testing

/// /days and /timeline on synthetic index rows: DST days (23 h and 25 h), a half-hour zone,
/// and the API's error answers.
@Suite(.serialized) struct CalendarAPITests {
    let root = TestEnvironment.tempDir("cal")
    let index: IndexDatabase
    let storage: StorageLayout
    let server: TestServer

    init() async throws {
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        storage = StorageLayout(root: root)
        index = try IndexDatabase(path: storage.indexPath)
        server = try await TestServer(index: index, storage: storage, maxViewSeconds: 3600)
        let cam = try index.addCamera(CameraRecord(name: "yard", plugin: "rtsp", config: "{}", created90k: 0))
        let entry = try index.sampleEntryID(
            SampleEntryRecord(
                codec: "h264", rfc6381: "avc1.640028", width: 1920, height: 1080, sampleRate: 0,
                channels: 0, timescale: 90_000, extradata: Data(), box: Data()))
        // Recordings, one per span (complete rows; no files are needed to answer these).
        func add(_ from: String, _ to: String, run: Int64) throws {
            let s = Time90k.parse(from)!
            let e = Time90k.parse(to)!
            var seg = SegmentRecord(
                cameraID: cam.id!, runID: run, runSeq: 0, start90k: s, duration90k: e - s, path: "x/\(s).mp4",
                bytes: 1000, frames: 10, keyFrames: 1, videoEntryID: entry, audioEntryID: nil, state: .complete)
            seg = try index.insertSegment(seg)
        }
        // Europe/Paris: 2026-10-25 is 25 h long (CEST → CET at 03:00 local = 01:00Z).
        try add("2026-10-24T21:30:00Z", "2026-10-24T22:30:00Z", run: 1)  // 23:30–00:30 local (+02:00): 24th and 25th
        try add("2026-10-25T22:30:00Z", "2026-10-25T23:30:00Z", run: 2)  // 23:30–00:30 local (+01:00): 25th and 26th
        // 2026-03-29 is 23 h long (CET → CEST).
        try add("2026-03-29T12:00:00Z", "2026-03-29T12:10:00Z", run: 3)
        // Asia/Kolkata (+05:30): 18:00Z–18:40Z crosses local midnight at 18:30Z.
        try add("2026-11-21T18:00:00Z", "2026-11-21T18:40:00Z", run: 4)
    }

    @Test func daysAndTimelineFollowLocalMidnightsThroughDSTAndHalfHourZones() async throws {
        let oct = try await server.get("/api/cameras/yard/days?month=2026-10&tz=Europe/Paris")
        #expect(oct.status == 200)
        let days = try #require(oct.json["days"] as? [[String: Any]])
        #expect(days.map { $0["date"] as! String } == ["2026-10-24", "2026-10-25", "2026-10-26"])
        let long = try #require(days.first { $0["date"] as? String == "2026-10-25" })
        #expect(long["hours"] as? Double == 25)
        #expect(long["start"] as? String == "2026-10-25T00:00:00+02:00")
        #expect(long["end"] as? String == "2026-10-26T00:00:00+01:00")
        #expect(long["recordedSeconds"] as? Double == 3600)  // 30 min of each recording

        let tl = try await server.get("/api/cameras/yard/timeline?date=2026-10-25&tz=Europe/Paris")
        #expect(tl.json["start90k"] as? Int64 == Time90k.parse("2026-10-24T22:00:00Z"))
        #expect(tl.json["end90k"] as? Int64 == Time90k.parse("2026-10-25T23:00:00Z"))
        let slices = try #require(tl.json["slices"] as? [[String: Any]])
        #expect(slices.map { $0["start"] as! String } == ["2026-10-24T22:00:00.000Z", "2026-10-25T22:30:00.000Z"])
        #expect(slices.map { $0["end"] as! String } == ["2026-10-24T22:30:00.000Z", "2026-10-25T23:00:00.000Z"])
        #expect(slices.allSatisfy { $0["kind"] as? String == "continuous" && $0["source"] as? String == "disk" })

        let mar = try await server.get("/api/cameras/yard/days?month=2026-03&tz=Europe/Paris")
        let short = try #require((mar.json["days"] as? [[String: Any]])?.first)
        #expect(short["date"] as? String == "2026-03-29" && short["hours"] as? Double == 23)

        let nov = try await server.get("/api/cameras/yard/days?month=2026-11&tz=Asia/Kolkata")
        let kdays = try #require(nov.json["days"] as? [[String: Any]])
        #expect(kdays.map { $0["date"] as! String } == ["2026-11-21", "2026-11-22"])
        #expect(kdays.map { $0["recordedSeconds"] as! Double } == [1800, 600])
        #expect(kdays[1]["start"] as? String == "2026-11-22T00:00:00+05:30")
        let ktl = try await server.get("/api/cameras/yard/timeline?date=2026-11-22&tz=Asia/Kolkata")
        let kslices = try #require(ktl.json["slices"] as? [[String: Any]])
        #expect(kslices.map { $0["start"] as! String } == ["2026-11-21T18:30:00.000Z"])
        #expect(kslices.map { $0["end90k"] as! Int64 } == [Time90k.parse("2026-11-21T18:40:00Z")!])
        // The same in UTC: one day.
        let utc = try await server.get("/api/cameras/yard/days?month=2026-11&tz=UTC")
        #expect((utc.json["days"] as? [[String: Any]])?.map { $0["date"] as! String } == ["2026-11-21"])
    }

    @Test func errorsAreJSONWithTheRightStatus() async throws {
        func check(_ path: String, _ status: Int, _ code: String, _ line: Int = #line) async throws {
            let a = try await server.get(path)
            #expect(a.status == status, "\(path): \(a.status)")
            #expect(a.json["error"] as? String == code, "\(path): \(String(decoding: a.body, as: UTF8.self))")
            #expect((a.json["message"] as? String)?.isEmpty == false)
            #expect(a.header("Content-Type")?.hasPrefix("application/json") == true)
        }
        try await check("/api/cameras/nope", 404, "not_found")
        try await check("/api/cameras/nope/view.mp4?start=0&end=90000", 404, "not_found")
        try await check("/api/cameras/yard/view.mp4?start=yesterday&end=90000", 400, "bad_time")
        try await check(
            "/api/cameras/yard/view.mp4?start=2026-11-21T18:10:00Z&end=2026-11-21T18:05:00Z", 400, "bad_request")
        try await check("/api/cameras/yard/view.mp4?start=2026-11-21T18:00:00Z", 400, "bad_request")
        try await check(
            "/api/cameras/yard/view.mp4?start=2026-11-21T10:00:00Z&end=2026-11-21T12:00:00Z", 400, "range_too_long")
        try await check(
            "/api/cameras/yard/view.mp4?start=2026-01-01T00:00:00Z&end=2026-01-01T00:10:00Z", 404, "nothing_recorded")
        try await check("/api/cameras/yard/snapshot.jpg?at=2026-01-01T00:00:00Z", 404, "nothing_recorded")
        try await check("/api/cameras/yard/snapshot.jpg?width=5", 400, "bad_request")
        try await check("/api/cameras/yard/days?month=2026-13", 400, "bad_request")
        try await check("/api/cameras/yard/days?month=2026-11&tz=Mars/Olympus", 400, "bad_request")
        try await check("/api/cameras/yard/timeline?date=2026-11-21&start=0&end=90000", 400, "bad_request")
        try await check("/api/cameras/yard/timeline?date=2026-02-30", 400, "bad_request")
        try await check("/api/cameras/yard/thumbnails?start=0&end=90000&count=0", 400, "bad_request")
        try await check("/api/nothing/here", 404, "not_found")
        // Times outside 1970–9999 are refused before any arithmetic (each of these once
        // stopped the whole server with an overflow trap).
        for path in [
            "/api/cameras/yard/timeline?start=-9223372036854775808&end=0",
            "/api/cameras/yard/view.mp4?start=-5000000000000000000&end=5000000000000000000",
            "/api/cameras/yard/view.mp4?start=2026-11-22T20:49:00Z&end=9223372036854775807",
            "/api/cameras/yard/thumbnails?start=-9223372036854775808&end=-9223372036854774808",
            "/api/cameras/yard/recordings?start=-9223372036854775808&end=0",
            "/api/cameras/yard/snapshot.jpg?at=9223372036854775807",
            "/api/cameras/yard/snapshot.jpg?at=-9223372036854775808",
            "/api/events?end=-9223372036854775807", "/api/events?start=-9223372036854775807&end=0",
            "/api/events?start=99999999999999999999999",
        ] {
            try await check(path, 400, "bad_time")
        }
        // No recording in range is an empty list for listings, not an error.
        let empty = try await server.get("/api/cameras/yard/recordings?start=0&end=90000")
        #expect(empty.status == 200 && (empty.json["recordings"] as? [Any])?.isEmpty == true)
    }

    @Test func openAPIDocumentIsServedAndMatchesDesignAPI() async throws {
        let a = try await server.get("/api/openapi.json")
        #expect(a.status == 200)
        let served = try #require(try JSONSerialization.jsonObject(with: a.body) as? NSDictionary)
        #expect(served["openapi"] as? String == "3.0.3")
        let paths = try #require(served["paths"] as? [String: Any])
        for p in [
            "/api/cameras", "/api/cameras/{name}", "/api/cameras/{name}/days", "/api/cameras/{name}/timeline",
            "/api/cameras/{name}/recordings", "/api/cameras/{name}/view.mp4", "/api/cameras/{name}/snapshot.jpg",
            "/api/cameras/{name}/thumbnails", "/api/openapi.json",
        ] {
            #expect(paths[p] != nil, "\(p) is documented")
        }
        // design/api.md carries the same document in its ```json block.
        let md = try String(contentsOfFile: TestEnvironment.repoRoot + "/design/api.md", encoding: .utf8)
        let block = try #require(
            md.components(separatedBy: "```json\n").dropFirst().first?.components(separatedBy: "\n```").first)
        let documented = try #require(try JSONSerialization.jsonObject(with: Data(block.utf8)) as? NSDictionary)
        #expect(documented == served, "design/api.md and /api/openapi.json differ: regenerate one from the other")
    }

    @Test func bindAddressesAreChecked() throws {
        // Any address may be bound (users log in); a malformed one is refused.
        _ = try HTTPServer(
            index: index, storage: storage, recorder: nil, options: .init(bind: "0.0.0.0:0"),
            logger: TestEnvironment.logger)
        _ = try HTTPServer(
            index: index, storage: storage, recorder: nil, options: .init(bind: "[::1]:0"),
            logger: TestEnvironment.logger)
        #expect(throws: (any Error).self) {
            _ = try HTTPServer(
                index: index, storage: storage, recorder: nil, options: .init(bind: "localhost"),
                logger: TestEnvironment.logger)
        }
    }
}
