import Foundation
import NVRIndex
import NVRTime
import TestSupport
import Testing

/// A real `nvr serve` with logins: cameras added and changed through the API and from the CLI
/// in another process take effect while it records; secrets never come back out; HTTPS with a
/// self-signed certificate works end to end with curl.
@Suite(.serialized, .tags(.system)) struct LiveChangeTests {
    static let secret = "S3cret-Canary-7731"

    /// `nvr serve` on a free port with an admin and a token, and a curl-free client.
    final class Served: @unchecked Sendable {
        // @unchecked Sendable: set up once in init, then only read.
        let root: String, config: String, port: Int, token: String, log: String
        let process = Process()
        /// `extraConfig`: more of nvr.toml (a section such as [mqtt]); `storageRoot`: recordings
        /// made beforehand (a RecorderHarness's root) instead of a new, empty root.
        init(tls: Bool = false, bind: String = "127.0.0.1", extraConfig: String = "", storageRoot: String? = nil)
            throws
        {
            root = TestEnvironment.tempDir("live")
            port = TestEnvironment.freePort()
            config = try writeConfig(
                root: root, plugins: TestEnvironment.buildDir, segmentSeconds: 3, httpBind: "\(bind):\(port)")
            if let storageRoot {
                try String(contentsOfFile: config, encoding: .utf8)
                    .replacingOccurrences(of: "root = \"\(root)/Storage\"", with: "root = \"\(storageRoot)\"")
                    .write(toFile: config, atomically: true, encoding: .utf8)
            }
            if !extraConfig.isEmpty {
                try (String(contentsOfFile: config, encoding: .utf8) + "\n" + extraConfig + "\n")
                    .write(toFile: config, atomically: true, encoding: .utf8)
            }
            if tls {
                let made = try runProcess(
                    TestEnvironment.nvrExecutable, ["tls", "self-signed", "--out-dir", root + "/tls"])
                guard made.status == 0 else { throw FixtureError("tls self-signed: \(made.stderr)") }
                try
                    (String(contentsOfFile: config, encoding: .utf8)
                    + "tls_cert = \"\(root)/tls/cert.pem\"\ntls_key = \"\(root)/tls/key.pem\"\n")
                    .write(toFile: config, atomically: true, encoding: .utf8)
            }
            let add = try Self.nvr(
                ["user", "add", "boss", "--role", "admin", "--config", config], stdin: "correct horse\n")
            guard add.status == 0 else { throw FixtureError("user add: \(add.stderr)") }
            token = try runProcess(
                TestEnvironment.nvrExecutable,
                ["token", "add", "--user", "boss", "--name", "tests", "--quiet", "--config", config]
            )
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            log = root + "/serve.log"
            FileManager.default.createFile(atPath: log, contents: nil)
            process.executableURL = URL(fileURLWithPath: TestEnvironment.nvrExecutable)
            process.arguments = ["serve", "--no-demo", "--config", config]
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            process.standardOutput = process.standardError
            try process.run()
            guard
                TestEnvironment.wait(
                    timeout: 20,
                    { (try? String(contentsOfFile: log, encoding: .utf8))?.contains("listening on") == true })
            else {
                throw FixtureError(
                    "nvr serve did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
            }
        }
        deinit {
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
            TestEnvironment.cleanup(root)
        }
        func stop() {
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
        }
        var logText: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

        static func nvr(_ args: [String], stdin: String) throws -> ProcessResult {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: TestEnvironment.nvrExecutable)
            p.arguments = args
            let input = Pipe()
            let out = Pipe()
            let err = Pipe()
            p.standardInput = input
            p.standardOutput = out
            p.standardError = err
            try p.run()
            input.fileHandleForWriting.write(Data(stdin.utf8))
            try input.fileHandleForWriting.close()
            p.waitUntilExit()
            return ProcessResult(
                status: p.terminationStatus,
                stdout: String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self),
                stderr: String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
        }

        func cli(_ args: [String]) throws -> ProcessResult {
            try runProcess(TestEnvironment.nvrExecutable, args + ["--config", config])
        }

        /// A request with the admin's token, through curl (HTTP or HTTPS with our own CA).
        func api(_ method: String, _ path: String, json: String? = nil, scheme: String = "http") throws -> (
            status: Int, body: String
        ) {
            var args = ["-s", "-o", "-", "-w", "\n%{http_code}", "-X", method, "-H", "Authorization: Bearer \(token)"]
            if scheme == "https" { args += ["--cacert", root + "/tls/cert.pem"] }
            if let json { args += ["-H", "Content-Type: application/json", "--data", json] }
            let r = try runProcess("/usr/bin/curl", args + ["\(scheme)://127.0.0.1:\(port)\(path)"])
            let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
        }

        func state(_ camera: String) -> String {
            let body = (try? api("GET", "/api/cameras/\(camera)").body) ?? ""
            let o = (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any]
            return "\(o?["state"] ?? "?") \(o?["reason"] ?? "")"
        }

        /// Seconds until `condition` holds (nil if it never did within `timeout`).
        func seconds(within timeout: Double, _ condition: () -> Bool) -> Double? {
            let start = Date()
            return TestEnvironment.wait(timeout: timeout, condition) ? Date().timeIntervalSince(start) : nil
        }
    }

    @Test func camerasChangeWhileRecordingFromTheAPIAndTheCLI() throws {
        var o = RTSPCameraFixture.Options()
        o.user = "admin"
        o.password = Self.secret
        let cam = try RTSPCameraFixture(o)
        let s = try Served()

        // Added through the API with the wrong password: it says so.
        var a = try s.api(
            "POST", "/api/cameras",
            json: #"{"name":"door","plugin":"rtsp","url":"\#(cam.url)","options":{"user":"admin","password":"wrong"}}"#)
        #expect(a.status == 201, "\(a.body)")
        #expect(s.seconds(within: 15) { s.state("door").contains("authorization failed") } != nil, "\(s.state("door"))")
        // The password edited through the API: recording within 5 s, no restart.
        a = try s.api("PATCH", "/api/cameras/door", json: #"{"options":{"password":"\#(Self.secret)"}}"#)
        #expect(a.status == 200 && !a.body.contains(Self.secret), "\(a.body)")
        let reconnected = s.seconds(within: 10) { s.state("door").hasPrefix("streaming") }
        #expect(reconnected.map { $0 < 5 } == true, "streaming after \(reconnected ?? -1) s: \(s.state("door"))")

        // A camera added through the API records within 5 s.
        a = try s.api(
            "POST", "/api/cameras",
            json: #"{"name":"yard","plugin":"rtsp","url":"\#(cam.url(user: "admin", password: Self.secret))"}"#)
        #expect(a.status == 201 && !a.body.contains(Self.secret), "\(a.body)")
        let recorded = s.seconds(within: 10) {
            let now = Time90k.now()
            let r =
                (try? s.api("GET", "/api/cameras/yard/recordings?start=\(now - 60 * 90_000)&end=\(now + 60 * 90_000)")
                    .body) ?? ""
            return r.contains("\"state\":\"writing\"") || r.contains("\"state\":\"complete\"")
        }
        #expect(recorded.map { $0 < 5 } == true, "a segment after \(recorded ?? -1) s")

        // The same from the CLI in another process while nvr serve runs.
        #expect(try s.cli(["camera", "disable", "door"]).status == 0)
        #expect(
            s.seconds(within: 10) { s.state("door").hasPrefix("stopped") }.map { $0 < 5 } == true, "\(s.state("door"))")
        #expect(try s.cli(["camera", "enable", "door"]).status == 0)
        #expect(
            s.seconds(within: 10) { s.state("door").hasPrefix("streaming") }.map { $0 < 5 } == true,
            "\(s.state("door"))")
        let renamed = try s.cli(["camera", "rename", "door", "front"])
        #expect(renamed.status == 0, "\(renamed.stderr)")
        #expect(
            s.seconds(within: 10) { s.state("front").hasPrefix("streaming") }.map { $0 < 5 } == true,
            "\(s.state("front"))")
        let added = try s.cli([
            "camera", "add", "side", "--plugin", "rtsp", "--url", cam.url, "--option", "user=admin", "--option",
            "password=\(Self.secret)",
        ])
        #expect(
            added.status == 0 && added.stdout.contains("starts it within a few seconds"),
            "\(added.stdout)\(added.stderr)")
        #expect(
            s.seconds(within: 10) { s.state("side").hasPrefix("streaming") }.map { $0 < 5 } == true,
            "\(s.state("side"))")

        // Removed through the API, recordings kept (default): they are still listed.
        a = try s.api("DELETE", "/api/cameras/yard")
        #expect(a.status == 200 && a.body.contains("\"recordings\":\"kept\""), "\(a.body)")
        #expect(try s.api("GET", "/api/cameras/yard").status == 404)
        let index = try IndexDatabase(path: s.root + "/Storage/index.sqlite")
        let yard = try #require(try index.camera(named: "yard", includeRemoved: true))
        let kept = try index.segments(cameraID: yard.id!)
        #expect(yard.removed90k != nil && !kept.isEmpty)

        // The secret never comes back out: answers, CLI, audit, log.
        var outputs: [String] = []
        for path in [
            "/api/cameras", "/api/cameras/front", "/api/cameras/front/config", "/api/cameras/side/config",
            "/api/audit?limit=1000",
        ] {
            let r = try s.api("GET", path)
            #expect(r.status == 200, "\(path): \(r.status)")
            outputs.append(r.body)
        }
        #expect(outputs[2].contains("\"password\":\"***\""), "\(outputs[2])")
        for args in [
            ["camera", "list", "--json"], ["camera", "list"], ["camera", "show", "front"], ["user", "list"],
            ["token", "list"],
        ] {
            let r = try s.cli(args)
            outputs.append(r.stdout + r.stderr)
        }
        s.stop()
        outputs.append(s.logText)
        for (i, text) in outputs.enumerated() {
            #expect(!text.contains(Self.secret), "output \(i) shows the secret:\n\(text.prefix(2000))")
        }
        #expect(!s.logText.contains(s.token))
    }

    /// A WebSocket upgrade whose `Connection` header lacks `upgrade` (as a misconfigured proxy
    /// sends it): the upgrader switches anyway, so the connection guard must take what follows
    /// as WebSocket bytes. It took them for HTTP request parts and the whole server died at the
    /// client's first frame.
    @Test func aWebSocketUpgradeWithoutConnectionUpgradeNeitherCrashesNorHangs() async throws {
        let s = try Served()
        #expect(try s.api("POST", "/api/cameras", json: #"{"name":"d","plugin":"demo"}"#).status == 201)
        #expect(TestEnvironment.wait(timeout: 15) { s.state("d").hasPrefix("streaming") })
        let c = try RawTCPConnection(port: s.port)
        c.send(
            "GET /api/cameras/d/live HTTP/1.1\r\nHost: 127.0.0.1:\(s.port)\r\nAuthorization: Bearer \(s.token)\r\nUpgrade: websocket\r\n"
                + "Connection: keep-alive\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        let deadline = Date().addingTimeInterval(5)
        while c.response == nil && Date() < deadline {
            c.poll()
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(c.response?.status == 101)
        c.send([0x89, 0x80, 1, 2, 3, 4])  // a masked ping
        try await Task.sleep(for: .seconds(1))
        #expect(s.process.isRunning, "nvr serve died")
        #expect(try s.api("GET", "/api/cameras").status == 200)
        c.close()
    }

    @Test func httpsWithASelfSignedCertificateOnEveryAddress() throws {
        let s = try Served(tls: true, bind: "0.0.0.0")
        // A real TLS handshake, checked against the certificate nvr made.
        let login = try runProcess(
            "/usr/bin/curl",
            [
                "-s", "-i", "--cacert", s.root + "/tls/cert.pem", "-H", "Content-Type: application/json",
                "--data", #"{"user":"boss","password":"correct horse"}"#, "https://127.0.0.1:\(s.port)/api/login",
            ])
        #expect(login.status == 0 && login.stdout.contains("HTTP/1.1 200"), "\(login.stdout)\(login.stderr)")
        let cookie = login.stdout.split(separator: "\r\n").first { $0.lowercased().hasPrefix("set-cookie:") } ?? ""
        #expect(
            cookie.contains("Secure") && cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "\(cookie)")
        let value =
            cookie.split(separator: ":", maxSplits: 1).last?.split(separator: ";").first?.trimmingCharacters(
                in: .whitespaces) ?? ""
        let cameras = try runProcess(
            "/usr/bin/curl",
            [
                "-s", "--cacert", s.root + "/tls/cert.pem", "-H", "Cookie: \(value)",
                "https://127.0.0.1:\(s.port)/api/cameras",
            ])
        #expect(cameras.stdout.hasPrefix("{\"cameras\":"), "\(cameras.stdout)")
        #expect(try s.api("GET", "/api/session", scheme: "https").status == 200)
        // Plain HTTP to the HTTPS port gets no answer it could use.
        let plain = try runProcess(
            "/usr/bin/curl",
            ["-s", "-m", "5", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(s.port)/api/health"])
        #expect(plain.stdout != "200")
        // An untrusted client is refused the handshake.
        let unverified = try runProcess("/usr/bin/curl", ["-s", "-m", "5", "https://127.0.0.1:\(s.port)/api/health"])
        #expect(unverified.status != 0)
    }
}
