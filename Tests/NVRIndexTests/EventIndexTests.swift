import Foundation
import Testing

@testable import NVRIndex

@Suite struct EventIndexTests {
    @Test func eventsOverlappingARangeOfOneCameraOrAllAndOneTypeOrAll() throws {
        let dir = NSTemporaryDirectory() + "idx-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = try IndexDatabase(path: dir + "/index.sqlite")
        let a = try db.addCamera(CameraRecord(name: "a", plugin: "demo", config: "{}", created90k: 0))
        let b = try db.addCamera(CameraRecord(name: "b", plugin: "demo", config: "{}", created90k: 0))
        let base: Int64 = 161_579_317_120_429
        func add(_ cam: CameraRecord, _ s: Int64, _ e: Int64?, _ type: String = "motion") throws -> EventRecord {
            try db.insertEvent(
                EventRecord(
                    cameraID: cam.id!, start90k: base + s * 90_000, end90k: e.map { base + $0 * 90_000 }, type: type,
                    source: .motion, preRoll90k: 0, postRoll90k: 0))
        }
        let long = try add(a, 0, 3600)  // an hour long: found from inside it
        let short = try add(a, 4000, 4010)
        let bell = try add(a, 5000, 5001, "doorbell")
        let open = try add(b, 6000, nil)  // in progress
        func ids(_ cam: CameraRecord?, _ s: Int64, _ e: Int64, _ type: String? = nil, limit: Int = 1000) throws
            -> [Int64]
        {
            try db.events(
                cameraID: cam?.id, start90k: base + s * 90_000, end90k: base + e * 90_000, type: type, limit: limit
            ).map { $0.id! }
        }
        #expect(try ids(a, 1800, 1801) == [long.id!])
        #expect(try ids(a, -100, 10_000) == [long.id!, short.id!, bell.id!])
        #expect(try ids(nil, -100, 10_000) == [long.id!, short.id!, bell.id!, open.id!])
        #expect(try ids(nil, -100, 10_000, "doorbell") == [bell.id!])
        #expect(try ids(nil, -100, 10_000, limit: 2) == [bell.id!, open.id!], "the newest, oldest first")
        #expect(try ids(b, 9000, 9001) == [open.id!], "an open event reaches to now")
        #expect(try ids(a, 3600, 4000).isEmpty, "ends are exclusive")
        // A crash leaves an event open: start-up closes it.
        #expect(try db.closeOpenEvents() == 1)
        #expect(try db.event(id: open.id!)?.end90k == open.start90k)
    }
}
