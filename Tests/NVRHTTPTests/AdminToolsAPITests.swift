import Foundation
import NVRCommands
import NVRHTTP
import NVRIndex
import NVRPlayback
import TestSupport
import Testing

/// What the page's admin tools call, through a real HTTP server: a retention pass and its
/// preview, a camera's card, the detector on a picture and a self-signed certificate — each
/// with the answers bad input gets.
@Suite struct AdminToolsAPITests {
    @Test func aRetentionPassIsPreviewedThenRun() async throws {
        let h = try RecorderHarness()
        let clip = h.root + "/yard.ts"
        try RecorderHarness.makeClip(clip, seconds: 20)
        let cam = try h.record([clip], as: "yard", start90k: Time90k.now() - 2 * 3600 * 90_000)
        let kept = try h.record([clip], as: "door", start90k: Time90k.now() - 2 * 3600 * 90_000)
        try h.index.setRetention(CameraRetention(cameraID: cam.id!, continuousDays: 1.0 / 24))
        let before = try h.completeSegments("yard").count
        try #require(before > 0)
        let server = try await TestServer(index: h.index, storage: h.recorder.storage)

        let bad = try await server.get("/api/retention/run?dryRun=maybe", method: "POST")
        #expect(bad.status == 400 && bad.json["error"] as? String == "bad_request", "\(bad.json)")
        let preview = try await server.get("/api/retention/run?dryRun=true", method: "POST")
        #expect(preview.status == 200 && preview.json["dryRun"] as? Bool == true, "\(preview.json)")
        #expect(preview.json["segments"] as? Int == before, "\(preview.json)")
        #expect(try h.completeSegments("yard").count == before, "the preview deleted footage")
        let run = try await server.get("/api/retention/run", method: "POST")
        #expect(run.status == 200 && run.json["segments"] as? Int == before, "\(run.json)")
        #expect(try h.completeSegments("yard").isEmpty)
        #expect(try !h.completeSegments("door").isEmpty, "camera \(kept.name) had no limit but lost footage")
    }

    @Test func aCameraWithoutACardSaysSo() async throws {
        let h = try RecorderHarness()
        let clip = h.root + "/demo.ts"
        try RecorderHarness.makeClip(clip, seconds: 4)
        _ = try h.record([clip], as: "yard", start90k: Time90k.now() - 3600 * 90_000)
        let server = try await TestServer(index: h.index, storage: h.recorder.storage)
        let day = "start=\(Time90k.now() - 86_400 * 90_000)&end=\(Time90k.now())"

        let listed = try await server.get("/api/cameras/yard/card?" + day)
        #expect(listed.status == 200 && listed.json["hasCard"] as? Bool == false, "\(listed.json)")
        #expect((listed.json["videos"] as? [Any])?.isEmpty == true)
        #expect(try await server.get("/api/cameras/yard/card").status == 400)
        #expect(try await server.get("/api/cameras/nobody/card?" + day).status == 404)
        let sync = try await server.get("/api/cameras/yard/card/sync", method: "POST")
        #expect(sync.status == 409 && sync.json["error"] as? String == "no_card", "\(sync.json)")
        let backwards = try await server.get(
            "/api/cameras/yard/card/sync?start=\(Time90k.now())&end=\(Time90k.now() - 90_000)", method: "POST")
        #expect(backwards.status == 400, "\(backwards.json)")
        #expect(try await server.get("/api/cameras/yard/card/file").status == 400)
        let unknown = try await server.get("/api/cameras/yard/card/file?file=..%2F..%2Fetc%2Fpasswd")
        #expect(unknown.status == 404 && (unknown.json["message"] as? String)?.contains("last listed") == true)
    }

    @Test func theDetectorTakesOnlyAJPEGBody() async throws {
        let h = try RecorderHarness()
        let server = try await TestServer(index: h.index, storage: h.recorder.storage)
        let noType = try await server.get("/api/detect", method: "POST", body: Data("x".utf8))
        #expect(noType.status == 415, "\(noType.json)")
        let badScore = try await server.get(
            "/api/detect?minScore=2", headers: ["Content-Type": "image/jpeg"], method: "POST", body: Data("x".utf8))
        #expect(badScore.status == 400 && (badScore.json["message"] as? String)?.contains("minScore") == true)
    }

    /// The nvr.toml lines the page and `nvr tls self-signed` give read back as the same paths,
    /// quotes and backslashes included.
    @Test func theConfigLinesForACertificateReadBackAsItsPaths() throws {
        let dir = TestEnvironment.tempDir("tls-lines")
        defer { TestEnvironment.cleanup(dir) }
        let cert = dir + #"/a "quoted" \ name/cert.pem"#
        let key = dir + "/key.pem"
        try SelfSignedCertificate.configLines(cert: cert, key: key).write(
            toFile: dir + "/nvr.toml", atomically: true, encoding: .utf8)
        let c = try NVRConfig.load(path: dir + "/nvr.toml", environment: [:])
        #expect(c.tlsCert == cert && c.tlsKey == key, "\(c.tlsCert ?? "nil") \(c.tlsKey ?? "nil")")
    }

    /// `nvr tls self-signed` writes the pair as the page does (SelfSignedCertificate.write): the
    /// key owner-only, nothing left beside it, an existing pair kept unless --force.
    @Test func theCommandWritesAnOwnerOnlyKeyAndKeepsAnExistingPair() throws {
        let dir = TestEnvironment.tempDir("tls-cli")
        defer { TestEnvironment.cleanup(dir) }
        let first = try runProcess(TestEnvironment.nvrExecutable, ["tls", "self-signed", "--out-dir", dir])
        #expect(first.status == 0, "\(first.stderr)")
        let mode = try FileManager.default.attributesOfItem(atPath: dir + "/key.pem")[.posixPermissions] as? Int
        #expect(mode == 0o600, "key.pem mode \(String(mode ?? 0, radix: 8))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["cert.pem", "key.pem"])
        let cert = try String(contentsOfFile: dir + "/cert.pem", encoding: .utf8)
        let again = try runProcess(TestEnvironment.nvrExecutable, ["tls", "self-signed", "--out-dir", dir])
        #expect(again.status != 0 && again.stderr.contains("exists"), "\(again.stderr)")
        #expect(try String(contentsOfFile: dir + "/cert.pem", encoding: .utf8) == cert)
        let forced = try runProcess(TestEnvironment.nvrExecutable, ["tls", "self-signed", "--out-dir", dir, "--force"])
        let replaced = try String(contentsOfFile: dir + "/cert.pem", encoding: .utf8)
        #expect(forced.status == 0 && replaced != cert, "\(forced.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["cert.pem", "key.pem"])
    }

    @Test func aSelfSignedCertificateIsMadeOnceThenReplacedWhenAsked() async throws {
        let h = try RecorderHarness()
        let server = try await TestServer(index: h.index, storage: h.recorder.storage)
        let none = try await server.get("/api/tls")
        #expect(none.status == 200 && none.json["https"] as? Bool == false && none.json["made"] == nil, "\(none.json)")
        let made = try await server.get("/api/tls/self-signed", method: "POST")
        #expect(made.status == 201, "\(made.json)")
        let cert = try #require(made.json["certificate"] as? [String: Any])
        let key = h.recorder.storage.root + "/tls/key.pem"
        #expect(cert["path"] as? String == h.recorder.storage.root + "/tls/cert.pem")
        #expect((made.json["config"] as? String)?.contains("tls_key = \"\(key)\"") == true)
        let mode = try FileManager.default.attributesOfItem(atPath: key)[.posixPermissions] as? Int
        #expect(mode == 0o600, "key.pem mode \(String(mode ?? 0, radix: 8))")
        #expect((cert["names"] as? [String])?.contains("localhost") == true, "\(cert)")
        // The certificate is one OpenSSL reads, with the fingerprint said.
        let openssl = try runProcess(
            "/usr/bin/openssl", ["x509", "-in", cert["path"] as? String ?? "", "-noout", "-fingerprint", "-sha256"])
        #expect(openssl.stdout.contains(cert["fingerprint"] as? String ?? "?"), "\(openssl.stdout) vs \(cert)")

        let again = try await server.get("/api/tls/self-signed", method: "POST")
        #expect(again.status == 409 && again.json["error"] as? String == "exists", "\(again.json)")
        #expect(try await server.get("/api/tls/self-signed?force=yes", method: "POST").status == 400)
        let replaced = try await server.get("/api/tls/self-signed?force=true", method: "POST")
        let second = (replaced.json["certificate"] as? [String: Any])?["fingerprint"] as? String
        #expect(replaced.status == 201 && second != nil && second != cert["fingerprint"] as? String)
        let status = try await server.get("/api/tls")
        #expect((status.json["made"] as? [String: Any])?["fingerprint"] as? String == second, "\(status.json)")
    }
}
