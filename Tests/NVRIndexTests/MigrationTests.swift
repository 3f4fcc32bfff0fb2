import Foundation
import GRDB
import Testing

@testable import NVRIndex

/// Migrations are frozen once committed: the schema each one makes is pinned in
/// Tests/Fixtures/schema/<version>.sql, and a database made at any earlier version upgrades to
/// the schema a new one gets. A new migration is pinned with `NVR_PIN_SCHEMA=1 swift test
/// --filter MigrationTests` (which writes missing pins only, never an existing one).
struct MigrationTests {
    static let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/schema")

    /// Everything the schema holds, in a stable order (GRDB's own bookkeeping left out).
    static func schema(_ reader: some DatabaseReader) throws -> String {
        try reader.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT type, name, sql FROM sqlite_master
                    WHERE name NOT LIKE 'sqlite_%' AND name != 'grdb_migrations' ORDER BY type, name
                    """
            ).map { row -> String in
                let sql: String? = row["sql"]
                return (sql ?? "-- \(row["type"] as String) \(row["name"] as String)") + ";"
            }.joined(separator: "\n") + "\n"
        }
    }

    static func fresh(upTo version: String) throws -> DatabaseQueue {
        let q = try DatabaseQueue()
        try IndexDatabase.migrator.migrate(q, upTo: version)
        return q
    }

    @Test func eachMigrationStillMakesTheSchemaItMadeWhenCommitted() throws {
        for version in IndexDatabase.schemaVersions {
            let made = try Self.schema(Self.fresh(upTo: version))
            try Self.checkPinned(made, version: version, in: Self.dir)
        }
    }

    /// The schema a migration made against its pin in `folder` (written there, if missing, with
    /// NVR_PIN_SCHEMA=1).
    static func checkPinned(_ made: String, version: String, in folder: URL) throws {
        let file = folder.appendingPathComponent("\(version).sql")
        if ProcessInfo.processInfo.environment["NVR_PIN_SCHEMA"] == "1"
            && !FileManager.default.fileExists(atPath: file.path)
        {
            try made.write(to: file, atomically: true, encoding: .utf8)
        }
        let pinned = try #require(
            try? String(contentsOf: file, encoding: .utf8),
            "no pinned schema for \(version): pin a new migration with NVR_PIN_SCHEMA=1")
        #expect(
            made == pinned,
            "migration \(version) no longer makes the schema it made when committed: make a new migration instead")
    }

    /// The migrations' source files too: an edit that leaves the schema alone (a data fix, a
    /// changed default in a statement that only runs on old rows) is still an edit. Their
    /// FNV-1a hashes are pinned in Tests/Fixtures/schema/migrations.txt, written the same way.
    @Test func committedMigrationSourcesAreUnchanged() throws {
        try Self.checkSourcesUnchanged(in: "Sources/NVRIndex/Migrations", pinnedIn: Self.dir)
    }

    /// The same for PostgreSQL's migrations (Tests/Fixtures/schema/postgresql/migrations.txt).
    @Test func committedPostgresMigrationSourcesAreUnchanged() throws {
        try Self.checkSourcesUnchanged(
            in: "Sources/NVRIndexPostgres/Migrations", pinnedIn: Self.dir.appendingPathComponent("postgresql"))
    }

    static func checkSourcesUnchanged(in folder: String, pinnedIn pins: URL) throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent(folder)
        func fnv1a(_ bytes: Data) -> String {
            var h: UInt64 = 0xcbf2_9ce4_8422_2325
            for b in bytes { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
            return String(h, radix: 16)
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: sources.path).filter { $0.hasSuffix(".swift") }
            .sorted { $0.count == $1.count ? $0 < $1 : $0.count < $1.count }
        let list = pins.appendingPathComponent("migrations.txt")
        var pinned: [String: String] = [:]
        for line in ((try? String(contentsOf: list, encoding: .utf8)) ?? "").split(separator: "\n") {
            let f = line.split(separator: " ")
            if f.count == 2 { pinned[String(f[0])] = String(f[1]) }
        }
        var lines: [String] = []
        for name in files {
            let hash = fnv1a(try Data(contentsOf: sources.appendingPathComponent(name)))
            lines.append("\(name) \(pinned[name] ?? hash)")
            if pinned[name] == nil && ProcessInfo.processInfo.environment["NVR_PIN_SCHEMA"] == "1" { continue }
            #expect(
                pinned[name] == hash,
                "\(name) changed after it was committed (or is new and not pinned): make a new migration instead")
        }
        if ProcessInfo.processInfo.environment["NVR_PIN_SCHEMA"] == "1" {
            try (lines.joined(separator: "\n") + "\n").write(to: list, atomically: true, encoding: .utf8)
        }
    }

    /// A database at `version`, on disk, holding a camera.
    static func database(at version: String, in dir: String, edit: (Database) throws -> Void = { _ in }) throws
        -> String
    {
        let path = dir + "/index-\(version).sqlite"
        let q = try DatabaseQueue(path: path)
        try IndexDatabase.migrator.migrate(q, upTo: version)
        try q.write { db in
            try db.execute(
                sql:
                    "INSERT INTO camera (name, plugin, config, enabled, created90k) VALUES ('porch', 'rtsp', '{}', 1, 1)"
            )
            try edit(db)
        }
        try q.close()
        return path
    }

    static func tempDir() -> String {
        let d = NSTemporaryDirectory() + "nvr-migrations-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        return d
    }

    @Test func aDatabaseFromEveryEarlierVersionUpgradesToTheSchemaANewOneGets() throws {
        let dir = Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let latest = try Self.schema(Self.fresh(upTo: try #require(IndexDatabase.schemaVersions.last)))
        for version in IndexDatabase.schemaVersions.dropLast() {
            let index = try IndexDatabase(path: try Self.database(at: version, in: dir))
            #expect(try Self.schema(index.pool) == latest, "upgraded from \(version)")
            let camera = try #require(
                try index.camera(named: "porch"), "the camera survives the upgrade from \(version)")
            // What the recorder and the API read first, including the open-event index by name.
            _ = try index.events(cameraID: camera.id, start90k: 0, end90k: Int64.max / 2)
            _ = try index.cardSlices(cameraID: camera.id!, start90k: 0, end90k: Int64.max / 2, includeOffTimeline: true)
            _ = try index.recordingSettings(cameraID: camera.id!)
        }
    }

    /// v11 makes the event table anew (a new source value, the box): every event keeps its id
    /// and fields, and a kept clip still points at its event.
    @Test func v11KeepsEventsAndTheClipsThatPointAtThem() throws {
        let dir = Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = try Self.database(at: "v10", in: dir) { db in
            try db.execute(
                sql: """
                    INSERT INTO event (id, camera_id, start90k, end90k, type, source, score, snapshot90k, pre_roll90k, post_roll90k)
                      VALUES (7, 1, 100, 200, 'motion', 'motion', 0.25, 150, 10, 20),
                             (8, 1, 300, NULL, 'doorbell', 'plugin', NULL, NULL, 0, 0);
                    INSERT INTO protected_clip (camera_id, start90k, end90k, event_id, note, created90k, created_by)
                      VALUES (1, 90, 220, 7, 'keep', 1, 'admin');
                    """)
        }
        let index = try IndexDatabase(path: path)
        let seven = try #require(try index.event(id: 7))
        #expect(
            seven
                == EventRecord(
                    id: 7, cameraID: 1, start90k: 100, end90k: 200, type: "motion", source: .motion, score: 0.25,
                    snapshot90k: 150, preRoll90k: 10, postRoll90k: 20))
        #expect(try index.event(id: 8)?.end90k == nil)
        let eventIDs = try index.pool.read { try Int64.fetchAll($0, sql: "SELECT event_id FROM protected_clip") }
        #expect(eventIDs == [7])
        // The new source and box are stored and read back.
        var e = EventRecord(
            cameraID: 1, start90k: 400, type: "person", source: .detection, score: 0.9, preRoll90k: 0,
            postRoll90k: 0, box: [0.1, 0.2, 0.3, 0.4])
        e = try index.insertEvent(e)
        #expect(try index.event(id: e.id!)?.box == [0.1, 0.2, 0.3, 0.4])
        #expect(try index.events(cameraID: 1, start90k: 0, end90k: 1000, type: "person").count == 1)
    }

    /// v1, v4 and v6 were edited after some databases had run them (see MigrationV10): those
    /// databases are repaired to the schema a new one gets, and the queries that failed on
    /// them ("no such index: event_open") work.
    @Test func databasesMadeByTheFirstEditionsOfEditedMigrationsAreRepaired() throws {
        let dir = Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let latest = try Self.schema(Self.fresh(upTo: try #require(IndexDatabase.schemaVersions.last)))
        let path = dir + "/first-editions.sqlite"
        let q = try DatabaseQueue(path: path)
        try IndexDatabase.migrator.migrate(q, upTo: "v1")
        try q.write { try $0.execute(sql: "DROP TABLE camera_state") }
        try IndexDatabase.migrator.migrate(q, upTo: "v4")
        try q.write { try $0.execute(sql: "DROP INDEX event_open; DROP INDEX event_length") }
        try IndexDatabase.migrator.migrate(q, upTo: "v6")
        try q.write { db in
            try db.execute(sql: "ALTER TABLE card_slice DROP COLUMN source")
            try db.execute(
                sql:
                    "INSERT INTO camera (name, plugin, config, enabled, created90k) VALUES ('porch', 'rtsp', '{}', 1, 1)"
            )
        }
        try q.write { db in
            #expect(throws: (any Error).self) {
                try db.execute(sql: "SELECT * FROM event INDEXED BY event_open WHERE end90k IS NULL")
            }
        }
        try q.close()
        let index = try IndexDatabase(path: path)
        #expect(try Self.schema(index.pool) == latest)
        let camera = try #require(try index.camera(named: "porch"))
        _ = try index.events(cameraID: camera.id, start90k: 0, end90k: Int64.max / 2)
        _ = try index.cardSlices(cameraID: camera.id!, start90k: 0, end90k: Int64.max / 2, includeOffTimeline: true)
    }
}
