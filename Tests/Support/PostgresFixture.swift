import Foundation

/// Debian's PostgreSQL 15 in a temporary folder: `initdb`, then the server on a free loopback
/// port as a child of the test (run as the `postgres` user: PostgreSQL refuses root). `stop()`
/// then `start()` again is an outage (same port, same data). Each test makes its own database
/// with `makeDatabase()`.
public final class PostgresFixture: @unchecked Sendable {
    // @unchecked Sendable: `process` is replaced only by start/stop, from the test's thread.
    public let port: Int
    public let folder: String
    /// The superuser's name; its password, when the fixture was made with one.
    public let user = "nvr"
    public let password: String?
    private var process: Process?
    /// The newest PostgreSQL Debian installed (/usr/lib/postgresql/<major>/bin).
    public static let bin: String = {
        let majors = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
            .compactMap { Int($0) }.sorted()
        return "/usr/lib/postgresql/\(majors.last ?? 15)/bin"
    }()

    /// `password`: connections over TCP must give it (scram-sha-256); none: trusted.
    /// `tls`: the server also speaks TLS, with a certificate for "localhost" from a CA the
    /// fixture makes (`caFile`).
    public init(password: String? = nil, tls: Bool = false) throws {
        port = TestEnvironment.freePort()
        folder = TestEnvironment.tempDir("pg")
        self.password = password
        guard let pw = getpwnam("postgres") else { throw FixtureError("no postgres user (apt install postgresql)") }
        let (uid, gid) = (pw.pointee.pw_uid, pw.pointee.pw_gid)
        chown(folder, uid, gid)
        var args = [
            "-D", folder + "/data", "-U", user, "--no-sync", "-E", "UTF8", "--locale", "C", "--auth-local", "trust",
        ]
        if let password {
            try password.write(toFile: folder + "/pw", atomically: true, encoding: .utf8)
            chown(folder + "/pw", uid, gid)
            args += ["--auth-host", "scram-sha-256", "--pwfile", folder + "/pw"]
        } else {
            args += ["--auth-host", "trust"]
        }
        let r = try runProcess("/usr/bin/setpriv", Self.asPostgres + [Self.bin + "/initdb"] + args)
        guard r.status == 0 else { throw FixtureError("initdb: \(r.stderr)") }
        if tls {
            try MosquittoFixture.makeCertificates(in: folder)
            for f in ["server.key", "server.pem"] { chown(folder + "/" + f, uid, gid) }
            chmod(folder + "/server.key", 0o600)
            let conf = "ssl = on\nssl_cert_file = '\(folder)/server.pem'\nssl_key_file = '\(folder)/server.key'\n"
            let h = try FileHandle(forWritingTo: URL(fileURLWithPath: folder + "/data/postgresql.conf"))
            h.seekToEndOfFile()
            h.write(Data(conf.utf8))
            try h.close()
        }
        try start()
    }

    /// The CA that signed the TLS certificate (with `tls`).
    public var caFile: String { folder + "/ca.pem" }

    deinit {
        stop(fast: true)
        TestEnvironment.cleanup(folder)
    }

    static let asPostgres = ["--reuid=postgres", "--regid=postgres", "--init-groups", "--"]

    /// Starts the server and waits until it accepts connections (retrying while a killed
    /// server's children still hold the data folder: they notice their parent died and exit).
    public func start() throws {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            p.arguments =
                Self.asPostgres + [
                    Self.bin + "/postgres", "-D", folder + "/data", "-p", String(port), "-k", folder,
                    "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "full_page_writes=off",
                    "-c", "max_connections=200",
                ]
            p.standardOutput = FileHandle.nullDevice
            let log = try FileHandle(forWritingTo: URL(fileURLWithPath: Self.created(folder + "/server.log")))
            log.seekToEndOfFile()
            p.standardError = log
            try p.run()
            process = p
            _ = TestEnvironment.wait(timeout: 20) { !p.isRunning || (try? psql("SELECT 1").status) == 0 }
            if p.isRunning { return }
            process = nil
            Thread.sleep(forTimeInterval: 0.5)
        }
        throw FixtureError("PostgreSQL did not start on \(port): \(log)")
    }

    /// Stops the server: SIGKILL (a machine dying) unless `fast` (SIGINT: PostgreSQL's fast
    /// shutdown, which ends its own children too).
    public func stop(fast: Bool = false) {
        guard let p = process else { return }
        if p.isRunning { kill(p.processIdentifier, fast ? SIGINT : SIGKILL) }
        p.waitUntilExit()
        process = nil
    }

    /// A new empty database; its URL for `[index] url` (no password in it).
    public func makeDatabase(_ name: String = "nvr_\(UInt32.random(in: 0...UInt32.max))") throws -> String {
        let r = try psql("CREATE DATABASE \(name)")
        guard r.status == 0 else { throw FixtureError("CREATE DATABASE: \(r.stderr)") }
        return "postgresql://\(user)@127.0.0.1:\(port)/\(name)"
    }

    /// Runs SQL with psql over the fixture's Unix socket (trusted), as the superuser.
    public func psql(_ sql: String, database: String = "postgres") throws -> ProcessResult {
        try runProcess(
            "/usr/bin/psql",
            ["-X", "-q", "-A", "-t", "-h", folder, "-p", String(port), "-U", user, "-d", database, "-c", sql])
    }

    public var log: String { (try? String(contentsOfFile: folder + "/server.log", encoding: .utf8)) ?? "" }

    static func created(_ path: String) -> String {
        if !FileManager.default.fileExists(atPath: path) { FileManager.default.createFile(atPath: path, contents: nil) }
        if let pw = getpwnam("postgres") { chown(path, pw.pointee.pw_uid, pw.pointee.pw_gid) }
        return path
    }
}
