import Foundation
import TestSupport
import Testing

/// The page's Settings alone, in Chromium, against a real `nvr serve`: a camera added, changed
/// and removed (Tests/Browser/settings_test.py, with a GStreamer RTSP camera); your account,
/// users, the audit log and storage (access_test.py).
@Suite(.serialized, .tags(.system)) struct SettingsPageTests {
    @Test func aCameraFromAddToRemoveByTheSettingsForms() throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: PageTests.python),
            "playwright is missing: run scripts/install-deps.sh test")
        var o = RTSPCameraFixture.Options()
        o.width = 320
        o.height = 180
        let camera = try RTSPCameraFixture(o)
        let s = try LiveChangeTests.Served()
        let shots = TestEnvironment.repoRoot + "/.build/test-screenshots"
        try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)
        let r = try runProcess(
            PageTests.python,
            [
                TestEnvironment.repoRoot + "/Tests/Browser/settings_test.py", "--base", "http://127.0.0.1:\(s.port)",
                "--user", "boss", "--password", "correct horse", "--shots", shots, "--camera-url", camera.url,
                "--token", s.token,
            ])
        print(r.stdout)
        #expect(
            r.status == 0,
            "the settings failed in chromium:\n\(r.stdout)\n\(r.stderr.suffix(3000))\n\(s.logText.suffix(3000))")
    }

    @Test func accountUsersAndStorageByTheirForms() throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: PageTests.python),
            "playwright is missing: run scripts/install-deps.sh test")
        let s = try LiveChangeTests.Served()
        let add = try s.api("POST", "/api/cameras", json: #"{"name":"yard","plugin":"demo"}"#)
        #expect(add.status == 201, "\(add.body)")
        let shots = TestEnvironment.repoRoot + "/.build/test-screenshots"
        try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)
        let r = try runProcess(
            PageTests.python,
            [
                TestEnvironment.repoRoot + "/Tests/Browser/access_test.py", "--base", "http://127.0.0.1:\(s.port)",
                "--user", "boss", "--password", "correct horse", "--shots", shots, "--token", s.token, "--camera",
                "yard",
            ])
        print(r.stdout)
        #expect(r.status == 0, "account, users or storage failed in chromium:\n\(r.stdout)\n\(r.stderr.suffix(3000))")
    }
}
