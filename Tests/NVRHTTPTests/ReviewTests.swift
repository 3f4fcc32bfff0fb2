import Foundation
import TestSupport
import Testing

/// The review queue end to end: `nvr serve` with the built-in person model records a person
/// crossing one camera (an alert: person and motion overlap, one item) and a square crossing
/// another (a detection: plain motion); the API lists and marks them per user, and the page's
/// review queue is driven in Chromium (Tests/Browser/review_test.py), then its detection
/// settings and zones (Tests/Browser/detection_settings_test.py).
@Suite(.serialized, .tags(.system)) struct ReviewTests {
    @Test func alertsComeFirstAndEachUserReviewsOnTheirOwn() throws {
        let runtime = try DetectionFixture.runtime
        let s = try LiveChangeTests.Served(extraConfig: "[detect]\nruntime = \"\(runtime)\"")
        let t0File = s.root + "/t0"
        var o = RTSPCameraFixture.Options()
        o.pattern = "scene"
        o.fps = 10
        o.extraArguments = [
            "--motion", "5-13", "--light", "100-101", "--t0-file", t0File, "--object",
            try DetectionFixture.picture("person"), "--object-crop", DetectionFixture.personCrop,
        ]
        let personCam = try RTSPCameraFixture(o)
        var square = RTSPCameraFixture.Options()
        square.pattern = "scene"
        square.fps = 10
        square.extraArguments = ["--motion", "5-10", "--light", "100-101"]
        let squareCam = try RTSPCameraFixture(square)
        for (name, url, settings) in [
            ("porch", personCam.url, #"{"detect":"person"}"#), ("yard", squareCam.url, #"{"motion":"on"}"#),
        ] {
            #expect(
                try s.api("POST", "/api/cameras", json: #"{"name":"\#(name)","plugin":"rtsp","url":"\#(url)"}"#).status
                    == 201)
            #expect(try s.api("PUT", "/api/cameras/\(name)/recording-settings", json: settings).status == 200)
        }
        // A viewer, whose flags are their own.
        let viewer = try LiveChangeTests.Served.nvr(
            ["user", "add", "eve", "--role", "viewer", "--config", s.config], stdin: "viewer horse\n")
        #expect(viewer.status == 0, "\(viewer.stderr)")
        let viewerToken = try s.cli(["token", "add", "--user", "eve", "--name", "t", "--quiet"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(TestEnvironment.wait(timeout: 20) { FileManager.default.fileExists(atPath: t0File) })
        let t0 = try #require(
            Double(try String(contentsOfFile: t0File, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        // Both crossings are over, and their events have ended.
        #expect(TestEnvironment.wait(timeout: 60) { Date().timeIntervalSince1970 > t0 + 22 })
        var body = ""
        #expect(
            TestEnvironment.wait(timeout: 20) {
                body = (try? s.api("GET", "/api/review").body) ?? ""
                let items = Self.items(body)
                return items.count == 2 && items.allSatisfy { $0["inProgress"] as? Bool == false }
            }, "\(body)\n\(s.logText.suffix(3000))")
        let items = Self.items(body)
        try #require(items.count == 2)
        #expect(items[0]["severity"] as? String == "alert" && items[0]["camera"] as? String == "porch")
        #expect((items[0]["labels"] as? [String]) == ["person", "motion"], "\(items[0])")
        #expect((items[0]["events"] as? [Any])?.count == 2)
        #expect(items[1]["severity"] as? String == "detection" && (items[1]["labels"] as? [String]) == ["motion"])
        #expect(items.allSatisfy { $0["reviewed"] as? Bool == false })
        // The events behind the alert, by label and zone (the camera has no zones: none there).
        let people = try s.api("GET", "/api/events?label=person").body
        #expect(people.contains("\"label\":\"person\"") && people.contains("\"box\":["), "\(people)")
        let nowhere = try s.api("GET", "/api/events?label=person&zone=driveway").body
        #expect(nowhere.contains("\"events\":[]"), "\(nowhere)")
        // Bad requests say what is wrong.
        #expect(try s.api("GET", "/api/review?severity=urgent").status == 400)
        #expect(try s.api("GET", "/api/review?reviewed=maybe").status == 400)
        #expect(try s.api("POST", "/api/review/999999/reviewed").status == 404)
        #expect(try s.api("POST", "/api/review/abc/reviewed").status == 400)

        // The page, in Chromium, as the admin.
        let shots = TestEnvironment.repoRoot + "/.build/test-screenshots"
        try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)
        let page = try runProcess(
            DetectionFixture.venv + "/bin/python",
            [
                TestEnvironment.repoRoot + "/Tests/Browser/review_test.py", "--base", "http://127.0.0.1:\(s.port)",
                "--user", "boss", "--password", "correct horse", "--shots", shots,
            ])
        #expect(page.status == 0, "the review queue in chromium: \(page.stdout) \(page.stderr.suffix(2000))")

        // The admin reviewed everything; the viewer nothing.
        let admin = Self.items(try s.api("GET", "/api/review").body)
        #expect(admin.count == 2 && admin.allSatisfy { $0["reviewed"] as? Bool == true }, "\(admin)")
        let r = try runProcess(
            "/usr/bin/curl",
            ["-s", "-H", "Authorization: Bearer \(viewerToken)", "http://127.0.0.1:\(s.port)/api/review"])
        let theirs = Self.items(r.stdout)
        #expect(theirs.count == 2 && theirs.allSatisfy { $0["reviewed"] as? Bool == false }, "\(r.stdout)")

        // The detection settings and zones from the page (Tests/Browser/detection_settings_test.py).
        let settingsPage = try runProcess(
            DetectionFixture.venv + "/bin/python",
            [
                TestEnvironment.repoRoot + "/Tests/Browser/detection_settings_test.py", "--base",
                "http://127.0.0.1:\(s.port)", "--user", "boss", "--password", "correct horse", "--camera", "yard",
                "--shots", shots,
            ])
        #expect(
            settingsPage.status == 0,
            "detection settings in chromium: \(settingsPage.stdout) \(settingsPage.stderr.suffix(2000))")
    }

    static func items(_ body: String) -> [[String: Any]] {
        let o = (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any]
        return o?["items"] as? [[String: Any]] ?? []
    }
}
