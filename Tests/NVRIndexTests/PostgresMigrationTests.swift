import Foundation
import NVRIndex
import Synchronization
import TestSupport
import Testing

@testable import NVRIndexPostgres

/// PostgreSQL's migrations are frozen like SQLite's: the schema each makes is pinned in
/// Tests/Fixtures/schema/postgresql/<version>.sql (pg_dump's schema, without its comments and
/// settings), written for a new migration by `NVR_PIN_SCHEMA=1` and never overwritten.
@Suite(.tags(.system)) struct PostgresMigrationTests {
    static let dir = MigrationTests.dir.appendingPathComponent("postgresql")

    static func schema(_ server: PostgresFixture, database: String) throws -> String {
        let r = try runProcess(
            PostgresFixture.bin + "/pg_dump",
            [
                "--schema-only", "--no-owner", "--no-privileges", "-h", server.folder, "-p", String(server.port), "-U",
                server.user, database,
            ])
        guard r.status == 0 else { throw FixtureError("pg_dump: \(r.stderr)") }
        var lines: [Substring] = []
        for line in r.stdout.split(separator: "\n") {
            // Comments, settings, and the random key of pg_dump's `\restrict` guard.
            if line.hasPrefix("--") || line.hasPrefix("SET ") || line.hasPrefix("SELECT pg_catalog.set_config")
                || line.hasPrefix("\\restrict") || line.hasPrefix("\\unrestrict")
            {
                continue
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test func eachMigrationStillMakesTheSchemaItMadeWhenCommitted() throws {
        let server = try PostgresFixture()
        for version in PostgresIndex.schemaVersions {
            let url = try server.makeDatabase()
            let location = try PostgresLocation(url: url)
            try PostgresMigrations.migrate(
                PostgresConnections(location: location, logger: .init(label: "test")), upTo: version)
            let made = try Self.schema(server, database: location.database)
            try MigrationTests.checkPinned(made, version: version, in: Self.dir)
        }
    }

    /// Nodes starting together against one empty database: one migrates, the others wait for
    /// its advisory lock and find the schema made.
    @Test func nodesStartingAtOnceMigrateOnce() throws {
        let server = try PostgresFixture()
        let location = try PostgresLocation(url: try server.makeDatabase())
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            do { _ = try PostgresIndex(location: location) } catch { failures.withLock { $0.append("\(error)") } }
        }
        #expect(failures.withLock { $0 } == [])
        let applied = try server.psql("SELECT string_agg(name, ',') FROM nvr_migration", database: location.database)
        #expect(
            applied.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                == PostgresIndex.schemaVersions.joined(separator: ","))
    }

    /// A database migrated by a newer nvr is refused, not written with an old idea of it.
    @Test func anIndexFromANewerNVRIsRefused() throws {
        let server = try PostgresFixture()
        let location = try PostgresLocation(url: try server.makeDatabase())
        _ = try PostgresIndex(location: location)
        #expect(try server.psql("INSERT INTO nvr_migration VALUES ('p99', 0)", database: location.database).status == 0)
        #expect {
            _ = try PostgresIndex(location: location)
        } throws: { "\($0)".contains("p99, newer than this nvr knows") }
    }

    /// TLS as libpq's sslmode: `require` encrypts (the certificate unchecked), `verify-full`
    /// checks the certificate against the CA given and the name.
    @Test func tlsModes() throws {
        let server = try PostgresFixture(tls: true)
        let url = try server.makeDatabase()
        let name = try PostgresLocation(url: url).database
        let byName = "postgresql://nvr@localhost:\(server.port)/\(name)"
        let required = try PostgresIndex(location: try PostgresLocation(url: byName + "?sslmode=require"))
        #expect(try required.cameras().isEmpty)
        let ssl = try server.psql("SELECT count(*) FROM pg_stat_ssl WHERE ssl", database: name)
        #expect(Int(ssl.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 >= 1, "a connection used TLS")
        let verified = try PostgresIndex(
            location: try PostgresLocation(url: byName + "?sslmode=verify-full&sslrootcert=\(server.caFile)"))
        #expect(try verified.userCount() == 0)
        #expect(throws: IndexError.self, "the system's CAs do not know the test CA") {
            _ = try PostgresIndex(location: try PostgresLocation(url: byName + "?sslmode=verify-full"))
        }
    }

    /// The password never comes from the URL, and the URL shown never holds it.
    @Test func thePasswordComesFromAFileOrTheEnvironment() throws {
        let server = try PostgresFixture(password: "s3cret pass")
        let url = try server.makeDatabase()
        #expect(throws: IndexError.self) {
            try PostgresLocation(url: url.replacingOccurrences(of: "nvr@", with: "nvr:s3cret@"))
        }
        #expect {
            _ = try PostgresIndex(location: try PostgresLocation(url: url, environment: [:]))
        } throws: { "\($0)".contains("cannot reach the index at \(url)") }
        let fromEnvironment = try PostgresLocation(url: url, environment: ["NVR_INDEX_PASSWORD": "s3cret pass"])
        #expect(try PostgresIndex(location: fromEnvironment).cameras().isEmpty)
        let file = server.folder + "/index-password"
        try "s3cret pass\n".write(toFile: file, atomically: true, encoding: .utf8)
        let fromFile = try PostgresLocation(url: url, passwordFile: file, environment: [:])
        #expect(try PostgresIndex(location: fromFile).userCount() == 0)
        #expect(!"\(fromFile)".contains("s3cret") && "\(fromFile)" == url)
    }
}
