import Foundation

/// Debian's mosquitto broker on a free loopback port with a config file of its own (anonymous,
/// or with a password file), started and stopped by a test: `stop()` then `start()` again is a
/// broker outage (same port, and no persistence: retained messages are gone, as after a crash).
public final class MosquittoFixture: @unchecked Sendable {
    // @unchecked Sendable: `process` is replaced only by start/stop, from the test's thread.
    public let port: Int
    public let folder: String
    private var process: Process?

    /// `users`: name → password (mosquitto_passwd hashes them); none: anonymous. `tls`: the
    /// listener speaks TLS only, with a certificate for "localhost" from a CA the fixture makes
    /// (`caFile`).
    public init(users: [String: String] = [:], tls: Bool = false) throws {
        port = TestEnvironment.freePort()
        folder = TestEnvironment.tempDir("mqtt")
        // The broker drops root for its own user, which writes its log here.
        chmod(folder, 0o777)
        var config = "listener \(port) 127.0.0.1\npersistence false\nlog_dest file \(folder)/broker.log\nlog_type all\n"
        if tls {
            try Self.makeCertificates(in: folder)
            config += "certfile \(folder)/server.pem\nkeyfile \(folder)/server.key\n"
        }
        if users.isEmpty {
            config += "allow_anonymous true\n"
        } else {
            let file = folder + "/passwords"
            for (user, password) in users {
                let r = try runProcess(
                    "/usr/bin/mosquitto_passwd",
                    (FileManager.default.fileExists(atPath: file) ? ["-b"] : ["-b", "-c"]) + [file, user, password])
                guard r.status == 0 else { throw FixtureError("mosquitto_passwd: \(r.stderr)") }
            }
            config += "allow_anonymous false\npassword_file \(file)\n"
        }
        try config.write(toFile: folder + "/mosquitto.conf", atomically: true, encoding: .utf8)
        try start()
    }

    deinit {
        stop()
        TestEnvironment.cleanup(folder)
    }

    /// The CA that signed the TLS listener's certificate.
    public var caFile: String { folder + "/ca.pem" }

    /// A CA, and a certificate for localhost it signs (openssl); readable by the broker, which
    /// drops root for its own user.
    static func makeCertificates(in folder: String) throws {
        let steps: [[String]] = [
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
                "-subj", "/CN=nvr test CA",
            ],
            [
                "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj",
                "/CN=localhost",
            ],
            [
                "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out",
                "server.pem", "-days", "2", "-extfile", "san.cnf",
            ],
        ]
        try "subjectAltName=DNS:localhost\n".write(toFile: folder + "/san.cnf", atomically: true, encoding: .utf8)
        for args in steps {
            let r = try runProcess("/usr/bin/openssl", args, cwd: folder)
            guard r.status == 0 else { throw FixtureError("openssl \(args[0]): \(r.stderr)") }
        }
        for f in ["server.key", "server.pem", "ca.pem"] { chmod(folder + "/" + f, 0o644) }
    }

    /// Starts the broker and waits until it accepts connections.
    public func start() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/sbin/mosquitto")
        p.arguments = ["-c", folder + "/mosquitto.conf"]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        process = p
        guard TestEnvironment.wait(timeout: 10, { Self.accepts(port: port) }) else {
            throw FixtureError("mosquitto did not start on \(port): \(log)")
        }
    }

    /// Kills the broker (SIGKILL: no goodbye to its clients, as when a machine dies).
    public func stop() {
        guard let p = process else { return }
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
        process = nil
    }

    public var log: String { (try? String(contentsOfFile: folder + "/broker.log", encoding: .utf8)) ?? "" }

    static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        } == 0
    }
}

/// An independent MQTT client (paho-mqtt from PyPI, Tests/Support/mqtt_listen.py) subscribed to
/// everything on a broker, writing each message it gets to a file as a JSON line; it reconnects
/// by itself after a broker outage.
public final class MQTTListener: @unchecked Sendable {
    public struct Message: Sendable {
        public var time: Double
        public var topic: String
        public var retain: Bool
        public var text: String
        public var bytes: Int
        public var json: [String: Any]? {
            (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
        }
    }

    private let process = Process()
    public let file: String

    public init(port: Int, folder: String) throws {
        file = folder + "/messages.jsonl"
        FileManager.default.createFile(atPath: file, contents: nil)
        process.executableURL = URL(fileURLWithPath: TestEnvironment.repoRoot + "/.build/test-venv/bin/python")
        process.arguments = [
            TestEnvironment.repoRoot + "/Tests/Support/mqtt_listen.py", "--port", String(port), "--out", file,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(
            forWritingTo: URL(fileURLWithPath: folder + "/listener.err").createdFile())
        try process.run()
        guard TestEnvironment.wait(timeout: 10, { self.messages.contains { $0.topic == "$listener/ready" } }) else {
            throw FixtureError(
                "the MQTT listener did not start: \((try? String(contentsOfFile: folder + "/listener.err", encoding: .utf8)) ?? "")"
            )
        }
    }

    deinit {
        // SIGKILL: a child started from a test's worker thread may have SIGTERM blocked.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Every message so far, oldest first.
    public var messages: [Message] {
        let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let o = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any],
                let topic = o["topic"] as? String
            else { return nil }
            return Message(
                time: o["time"] as? Double ?? 0, topic: topic, retain: o["retain"] as? Bool ?? false,
                text: o["text"] as? String ?? "", bytes: o["bytes"] as? Int ?? 0)
        }
    }

    public func on(_ topic: String) -> [Message] { messages.filter { $0.topic == topic } }
}

extension URL {
    fileprivate func createdFile() -> URL {
        FileManager.default.createFile(atPath: path, contents: nil)
        return self
    }
}
