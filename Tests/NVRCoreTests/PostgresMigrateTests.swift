import Foundation
import NVRIndex
import NVRIndexPostgres
import TestSupport
import Testing

/// An installer moving a recording NVR from its SQLite index to PostgreSQL: `nvr db migrate
/// --to postgresql://…` with the server stopped, the copy proven by the integrity check, then
/// `nvr serve` on PostgreSQL plays what was recorded before, takes the same password and token,
/// and records on. Refused while a server records and into a database that holds an index.
@Suite(.serialized, .tags(.system)) struct PostgresMigrateTests {
    @Test func aRecordingSQLiteIndexMovesToPostgreSQL() throws {
        let password = "mig-Secret-31"
        let server = try PostgresFixture(password: password)
        let url = try server.makeDatabase()
        let cam = try RTSPCameraFixture(.small())
        let root = TestEnvironment.tempDir("pgmigrate")
        defer { TestEnvironment.cleanup(root) }
        let port = TestEnvironment.freePort()
        let config = try writeConfig(
            root: root, plugins: TestEnvironment.buildDir, segmentSeconds: 2, httpBind: "127.0.0.1:\(port)")
        let passwordFile = root + "/index-password"
        try password.write(toFile: passwordFile, atomically: true, encoding: .utf8)
        func nvr(_ args: String...) throws -> ProcessResult {
            try runProcess(TestEnvironment.nvrExecutable, args + ["--config", config])
        }
        func migrate() throws -> ProcessResult {
            try nvr("db", "migrate", "--to", url, "--password-file", passwordFile)
        }
        #expect(try nvr("camera", "add", "cam", "--plugin", "rtsp", "--url", cam.url).status == 0)
        #expect(try nvr("retention", "set", "--min-free", "0%").status == 0)
        #expect(try nvr("retention", "set", "--camera", "cam", "--continuous-days", "30").status == 0)

        // Recording on SQLite.
        let log = root + "/serve.log"
        let serve = try startServe(config, log: log)
        func logText() -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        let sqlite = try IndexDatabase(path: root + "/Storage/index.sqlite")
        let camID = try #require(try sqlite.camera(named: "cam")?.id)
        #expect(
            TestEnvironment.wait(timeout: 40) {
                ((try? sqlite.segments(cameraID: camID)) ?? []).filter { $0.state == .complete }.count >= 3
            }, "\(logText())")
        let token = try nvr("token", "add", "--user", "admin", "--name", "before", "--quiet")
        #expect(token.status == 0, "\(token.stderr)")
        let bearer = token.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let adminPassword = try #require(
            logText().firstMatch(of: /the password +(\S+)/).map { String($0.1) }, "\(logText())")

        // While it records, the copy is refused: rows written after it would be lost.
        let busy = try migrate()
        #expect(
            busy.status == 1 && busy.stderr.contains("another nvr serve is already recording")
                && busy.stderr.split(separator: "\n").count == 1, "\(busy.stdout)\(busy.stderr)")
        kill(serve.processIdentifier, SIGINT)
        serve.waitUntilExit()
        #expect(serve.terminationStatus == 0, "\(logText())")

        let before = try sqlite.segments(cameraID: camID)
        let moved = try migrate()
        #expect(moved.status == 0, "\(moved.stdout)\(moved.stderr)")
        #expect(moved.stdout.contains("ok: index and files agree (nvr db check on PostgreSQL)"), "\(moved.stdout)")
        #expect(moved.stdout.contains("url = \"\(url)\"\npassword_file = \"\(passwordFile)\""), "\(moved.stdout)")
        #expect(!moved.stdout.contains(password) && !moved.stderr.contains(password))

        // Row for row, with the same ids.
        let pg = try PostgresIndex(
            location: try PostgresLocation(url: url, passwordFile: passwordFile, environment: [:]))
        #expect(try pg.segments(cameraID: camID) == before && !before.isEmpty)
        #expect(try pg.cameras() == sqlite.cameras())
        #expect(try pg.users() == sqlite.users())
        #expect(try pg.tokens() == sqlite.tokens())
        #expect(try pg.retention(cameraID: camID) == sqlite.retention(cameraID: camID))
        #expect(try pg.audit(limit: 1000) == sqlite.audit(limit: 1000))
        for s in before {
            let id = try #require(s.id)
            #expect(try pg.frames(segmentID: id) == sqlite.frames(segmentID: id), "frames of segment \(id)")
        }

        // Ids PostgreSQL gives from now on follow the copied ones, in each table with an identity.
        let database = String(url.split(separator: "/").last ?? "")
        let identities = try server.psql(
            "SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' AND is_identity = 'YES'",
            database: database
        ).stdout.split(separator: "\n").map { "\"\($0)\"" }
        #expect(identities.count >= 11, "\(identities)")
        for table in identities {
            let next = try server.psql(
                "SELECT nextval(pg_get_serial_sequence('\(table)', 'id')) > (SELECT COALESCE(max(id), 0) FROM \(table))",
                database: database)
            #expect(next.stdout == "t\n", "\(table): \(next.stdout)\(next.stderr)")
        }

        // Into a database that holds an index: refused, nothing written over.
        let again = try migrate()
        #expect(again.status == 1 && again.stderr.contains("is not empty"), "\(again.stdout)\(again.stderr)")
        #expect(try pg.segments(cameraID: camID) == before)

        // nvr.toml switched as the command says: the check, then the server on PostgreSQL.
        try append("[index]\nurl = \"\(url)\"\npassword_file = \"\(passwordFile)\"\n", to: config)
        let check = try nvr("db", "check")
        #expect(
            check.status == 0 && check.stdout.contains("ok: index and files agree"), "\(check.stdout)\(check.stderr)")
        let log2 = root + "/serve2.log"
        let onPG = try startServe(config, log: log2)
        func log2Text() -> String { (try? String(contentsOfFile: log2, encoding: .utf8)) ?? "" }
        let newest = before.compactMap(\.id).max() ?? 0
        // New segments get ids after the copied ones (PostgreSQL's identities were moved on).
        #expect(
            TestEnvironment.wait(timeout: 40) {
                ((try? pg.segments(cameraID: camID)) ?? []).filter { $0.state == .complete && $0.id ?? 0 > newest }
                    .count >= 2
            }, "\(log2Text())")
        #expect(!log2Text().contains("first start: created the user"), "a new admin was made: \(log2Text())")
        #expect(!log2Text().contains("duplicate key"), "\(log2Text())")

        // The password and the token from before; footage from before and after, as one file.
        let login = try runProcess(
            "/usr/bin/curl",
            [
                "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Content-Type: application/json", "-d",
                #"{"user":"admin","password":"\#(adminPassword)"}"#, "http://127.0.0.1:\(port)/api/login",
            ])
        #expect(login.stdout == "200", "login: \(login.stdout) \(login.stderr)")
        let start = try #require(before.first).start90k
        let after = try pg.segments(cameraID: camID).filter { $0.state == .complete }
        let end = try #require(after.last).end90k
        let timeline = try httpGet(port: port, "/api/cameras/cam/timeline?start=\(start)&end=\(end)", token: bearer)
        #expect(
            timeline.stdout.hasSuffix("\n200") && timeline.stdout.contains("\(start)"),
            "\(timeline.stdout) \(timeline.stderr)")
        let mp4 = root + "/view.mp4"
        let view = try httpGet(
            port: port, "/api/cameras/cam/view.mp4?start=\(start)&end=\(end)", token: bearer, to: mp4)
        #expect(view.stdout.hasSuffix("200"), "\(view.stdout) \(view.stderr)")
        let frames = try h264Frames(mp4)
        let copied = before.reduce(0) { $0 + $1.frames }
        #expect(frames > copied && copied > 0, "\(frames) frames played, \(copied) recorded on SQLite")
        kill(onPG.processIdentifier, SIGINT)
        onPG.waitUntilExit()
        #expect(onPG.terminationStatus == 0, "\(log2Text())")

        // Then the first recorder node, on the same box and root: what was recorded before
        // nodes has its files here, so it is this node's. Recovery keeps those files (it took
        // them for files without rows), and the node's own queries see them.
        let unowned = try pg.segments(cameraID: camID)
        #expect(unowned.allSatisfy { $0.node == nil })
        try append("[cluster]\nnode = \"rack1\"\n", to: config)
        let log3 = root + "/serve3.log"
        let asNode = try startServe(config, log: log3)
        func log3Text() -> String { (try? String(contentsOfFile: log3, encoding: .utf8)) ?? "" }
        let lastUnowned = unowned.compactMap(\.id).max() ?? 0
        #expect(
            TestEnvironment.wait(timeout: 40) {
                ((try? pg.segments(cameraID: camID)) ?? []).contains {
                    $0.node == "rack1" && $0.state == .complete && $0.id ?? 0 > lastUnowned
                }
            }, "\(log3Text())")
        kill(asNode.processIdentifier, SIGINT)
        asNode.waitUntilExit()
        #expect(asNode.terminationStatus == 0, "\(log3Text())")
        #expect(
            log3Text().contains("node rack1: took \(unowned.count) segments recorded before nodes"), "\(log3Text())")
        #expect(!log3Text().contains("recovery: removed"), "\(log3Text())")
        let gone = unowned.filter { !FileManager.default.fileExists(atPath: root + "/Storage/" + $0.path) }
        #expect(gone.isEmpty, "files of segments from before nodes removed: \(gone.map(\.path))")
        #expect(try pg.segments(cameraID: camID).allSatisfy { $0.node == "rack1" })
        let nodeCheck = try nvr("db", "check")
        #expect(
            nodeCheck.status == 0 && nodeCheck.stdout.contains("ok: index and files agree"),
            "\(nodeCheck.stdout)\(nodeCheck.stderr)")
    }

    /// The command's refusals, each in one line, before anything is written.
    @Test func refusalsSayWhyInOneLine() throws {
        let root = TestEnvironment.tempDir("pgmigrate-no")
        defer { TestEnvironment.cleanup(root) }
        let config = try writeConfig(root: root, plugins: TestEnvironment.buildDir)
        func migrate(_ to: String) throws -> ProcessResult {
            try runProcess(TestEnvironment.nvrExecutable, ["db", "migrate", "--to", to, "--config", config])
        }
        let none = try migrate("postgresql://nvr@127.0.0.1:1/nvr")
        #expect(none.status == 1 && none.stderr.contains("no SQLite index at"), "\(none.stderr)")
        #expect(try runProcess(TestEnvironment.nvrExecutable, ["camera", "list", "--config", config]).status == 0)
        let withPassword = try migrate("postgresql://nvr:hunter2@127.0.0.1:1/nvr")
        #expect(
            withPassword.status == 1 && withPassword.stderr.contains("must not hold a password")
                && !withPassword.stderr.contains("hunter2"), "\(withPassword.stderr)")
        let unreachable = try migrate("postgresql://nvr@127.0.0.1:\(TestEnvironment.freePort())/nvr")
        #expect(
            unreachable.status == 1 && unreachable.stderr.contains("cannot reach the index")
                && unreachable.stderr.split(separator: "\n").count == 1, "\(unreachable.stderr)")
        try append("[index]\nurl = \"postgresql://nvr@127.0.0.1:1/nvr\"\n", to: config)
        let already = try migrate("postgresql://nvr@127.0.0.1:1/other")
        #expect(already.status == 1 && already.stderr.contains("already on PostgreSQL"), "\(already.stderr)")
    }
}
