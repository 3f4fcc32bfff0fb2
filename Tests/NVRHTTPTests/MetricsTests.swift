import Foundation
import TestSupport
import Testing

/// `/metrics` of a real `nvr serve` recording a camera, checked by Prometheus's own promtool;
/// the shipped scrape config and alert rules checked (and the rules unit-tested) by it too.
@Suite(.serialized, .tags(.system)) struct MetricsTests {
    static let promtool = "/usr/bin/promtool"

    /// Pipes `text` into `promtool check metrics` (exit 0 only for a valid exposition).
    static func promtoolCheckMetrics(_ text: String) throws -> ProcessResult {
        let file = TestEnvironment.tempDir("metrics") + "/metrics.txt"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        defer { TestEnvironment.cleanup((file as NSString).deletingLastPathComponent) }
        return try runProcess("/bin/sh", ["-c", "\(promtool) check metrics < '\(file)'"])
    }

    /// The value of one series (`name{labels}`), or nil when absent.
    static func value(_ text: String, _ series: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }

    @Test func metricsOfARecordingServerPassPromtool() async throws {
        let s = try LiveChangeTests.Served()
        defer { s.stop() }
        #expect(try s.cli(["camera", "add", "yard", "--plugin", "demo"]).status == 0)
        var text = ""
        let up = try await TestEnvironment.eventually(timeout: 30) {
            text = try s.api("GET", "/metrics").body
            return (Self.value(text, "nvr_camera_frames_total{camera=\"yard\"}") ?? 0) > 0
                && Self.value(text, "nvr_camera_up{camera=\"yard\"}") == 1
        }
        #expect(up, "yard never streamed in /metrics:\n\(text)\n\(s.logText)")
        let check = try Self.promtoolCheckMetrics(text)
        #expect(check.status == 0, "promtool check metrics: \(check.stdout) \(check.stderr)")
        for series in [
            "nvr_camera_enabled{camera=\"yard\"}", "nvr_camera_state{camera=\"yard\",state=\"streaming\"}",
            "nvr_camera_connections_total{camera=\"yard\"}", "nvr_live_viewers{camera=\"yard\",stream=\"main\"}",
            "nvr_storage_free_bytes", "nvr_storage_size_bytes", "nvr_retention_deleted_segments_total",
            "nvr_build_info{version=\"0.9.0\"}", "nvr_camera_last_frame_age_seconds{camera=\"yard\"}",
            "nvr_index_writer_pending_writes", "nvr_index_writer_oldest_pending_seconds",
            "nvr_index_writer_dropped_writes_total", "nvr_index_journal_writes",
        ] {
            #expect(Self.value(text, series) != nil, "\(series) missing from:\n\(text)")
        }
        #expect(Self.value(text, "nvr_camera_connections_total{camera=\"yard\"}") == 1)
        #expect(Self.value(text, "nvr_camera_state{camera=\"yard\",state=\"failed\"}") == 0)
        // Totals grow between scrapes; the scrapes themselves are counted by route.
        let frames = Self.value(text, "nvr_camera_frames_total{camera=\"yard\"}") ?? 0
        let grew = try await TestEnvironment.eventually(timeout: 10) {
            text = try s.api("GET", "/metrics").body
            return (Self.value(text, "nvr_camera_frames_total{camera=\"yard\"}") ?? 0) > frames
        }
        #expect(grew, "frames did not grow past \(frames)")
        #expect(
            (Self.value(text, "nvr_http_requests_total{route=\"/metrics\",method=\"GET\",status=\"200\"}") ?? 0) >= 2,
            "\(text)")
        let segments = try await TestEnvironment.eventually(timeout: 15) {
            text = try s.api("GET", "/metrics").body
            return (Self.value(text, "nvr_camera_segments_total{camera=\"yard\"}") ?? 0) >= 1
                && (Self.value(text, "nvr_camera_stored_bytes{camera=\"yard\"}") ?? 0) > 0
        }
        #expect(segments, "no segment counted:\n\(text)")
        // The segment's row went through the index writer: at least one commit, nothing dropped,
        // and nothing waiting for long.
        #expect((Self.value(text, "nvr_index_writer_commits_total") ?? 0) >= 1, "\(text)")
        #expect(Self.value(text, "nvr_index_writer_dropped_writes_total") == 0)
        #expect((Self.value(text, "nvr_index_writer_oldest_pending_seconds") ?? 99) < 5)

        // Only an admin reads it.
        let anonymous = try runProcess(
            "/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(s.port)/metrics"])
        #expect(anonymous.stdout == "401")
        let viewer = try LiveChangeTests.Served.nvr(
            ["user", "add", "eve", "--role", "viewer", "--config", s.config], stdin: "viewer password\n")
        #expect(viewer.status == 0, "\(viewer.stderr)")
        let viewerToken = try s.cli(["token", "add", "--user", "eve", "--name", "t", "--quiet"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let forbidden = try runProcess(
            "/usr/bin/curl",
            [
                "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer \(viewerToken)",
                "http://127.0.0.1:\(s.port)/metrics",
            ])
        #expect(forbidden.stdout == "403")

        // A removed camera's series go with it.
        #expect(try s.cli(["camera", "remove", "yard", "--keep-recordings"]).status == 0)
        let gone = try await TestEnvironment.eventually(timeout: 15) {
            text = try s.api("GET", "/metrics").body
            return !text.contains("camera=\"yard\"")
        }
        #expect(gone, "yard still in:\n\(text)")
        #expect(try Self.promtoolCheckMetrics(text).status == 0)
    }

    @Test func shippedScrapeConfigAndAlertRulesPassPromtool() throws {
        let dir = TestEnvironment.repoRoot + "/deploy/prometheus"
        let rules = try runProcess(Self.promtool, ["test", "rules", "nvr-alerts.test.yml"], cwd: dir)
        #expect(rules.status == 0, "promtool test rules: \(rules.stdout) \(rules.stderr)")
        // check config wants the token file to exist: a copy pointing at a temporary one.
        let tmp = TestEnvironment.tempDir("prom")
        defer { TestEnvironment.cleanup(tmp) }
        try "token\n".write(toFile: tmp + "/nvr.token", atomically: true, encoding: .utf8)
        let config = try String(contentsOfFile: dir + "/prometheus.yml", encoding: .utf8)
            .replacingOccurrences(of: "/etc/prometheus/nvr.token", with: tmp + "/nvr.token")
        #expect(config.contains(tmp + "/nvr.token"))
        try config.write(toFile: tmp + "/prometheus.yml", atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(atPath: dir + "/nvr-alerts.yml", toPath: tmp + "/nvr-alerts.yml")
        let checked = try runProcess(Self.promtool, ["check", "config", tmp + "/prometheus.yml"])
        #expect(checked.status == 0, "promtool check config: \(checked.stdout) \(checked.stderr)")
    }
}
