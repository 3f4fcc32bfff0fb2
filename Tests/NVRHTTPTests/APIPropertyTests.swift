import Foundation
import NVRIndex
import TestSupport
import Testing

/// The whole HTTP API driven from its own OpenAPI document by schemathesis (PyPI; installed
/// into .build/test-venv by `scripts/install-deps.sh test`) against a real `nvr serve`
/// recording the demo camera: no answer is a server error, every answer (status, content
/// type, headers, body) is what the document says, methods it does not list get 405, and the
/// server is still recording afterwards.
@Suite(.serialized, .tags(.system)) struct APIPropertyTests {
    static var schemathesis: String { TestEnvironment.repoRoot + "/.build/test-venv/bin/schemathesis" }

    /// Fixed so a failure reproduces; NVR_SCHEMATHESIS_SEED explores others by hand.
    static var seed: String { ProcessInfo.processInfo.environment["NVR_SCHEMATHESIS_SEED"] ?? "20261122" }

    @Test func everyAnswerMatchesTheOpenAPIDocument() throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.schemathesis),
            "schemathesis is missing: run scripts/install-deps.sh test")
        let root = TestEnvironment.tempDir("schemathesis")
        defer { TestEnvironment.cleanup(root) }
        let port = TestEnvironment.freePort()
        let config = try writeConfig(
            root: root, plugins: TestEnvironment.buildDir, segmentSeconds: 2, httpBind: "127.0.0.1:\(port)")
        // An admin's token: every operation is reachable (a viewer's would see 403s only).
        let add = try LiveChangeTests.Served.nvr(
            ["user", "add", "boss", "--role", "admin", "--config", config], stdin: "correct horse\n")
        #expect(add.status == 0, "\(add.stderr)")
        let token = try runProcess(
            TestEnvironment.nvrExecutable,
            ["token", "add", "--user", "boss", "--name", "schemathesis", "--quiet", "--config", config]
        )
        .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let log = root + "/serve.log"
        FileManager.default.createFile(atPath: log, contents: nil)
        let serve = Process()
        serve.executableURL = URL(fileURLWithPath: TestEnvironment.nvrExecutable)
        serve.arguments = ["serve", "--config", config]  // with the demo camera
        serve.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        serve.standardOutput = serve.standardError
        try serve.run()
        defer {
            if serve.isRunning {
                serve.terminate()
                serve.waitUntilExit()
            }
        }
        #expect(
            TestEnvironment.wait(timeout: 20) { FileManager.default.fileExists(atPath: root + "/Storage/index.sqlite") }
        )
        let index = try IndexDatabase(path: root + "/Storage/index.sqlite")
        #expect(
            TestEnvironment.wait(timeout: 30) { ((try? index.segments(state: .complete)) ?? []).count >= 2 },
            "the demo camera records")

        // Checks about answers only: the document cannot say "end after start" or which days
        // exist, so valid-looking requests refused with a documented 400 are not failures.
        // Adding, re-pointing or probing cameras is left out: a random URL would make the server
        // connect wherever it points (tests talk to 127.0.0.0/8 only); LiveChangeTests and
        // SettingsPageTests cover them.
        let arguments: [String] = [
            "run", "http://127.0.0.1:\(port)/api/openapi.json", "-H", "Authorization: Bearer \(token)",
            "--exclude-operation-id", "addCamera", "--exclude-operation-id", "changeCamera",
            "--exclude-operation-id", "probeCamera",
            // Removing the run's own token would leave the rest of the run with 401s only.
            "--exclude-operation-id", "removeToken",
            // Discovery multicasts on the machine's networks; DiscoveryTests runs it in namespaces of its own.
            "--exclude-operation-id", "discoverCameras",
            "--checks",
            "not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,"
                + "response_schema_conformance,unsupported_method",
            "--phases", "examples,coverage,fuzzing", "--max-examples", "60", "--seed", Self.seed, "--max-time",
            "120",
            "--workers", "2", "--generation-database", "none", "--request-timeout", "20", "--no-color",
        ]
        var r = try runProcess(Self.schemathesis, arguments, cwd: root)
        // With two workers, schemathesis's example generator sometimes trips over a cache of
        // hypothesis's that the threads share (a KeyError in its lambda descriptions, reported as
        // a FlakyFailure "Runtime Error" before any request; seen once in CI, 2026-11-26; or as
        // "AST constructor recursion depth mismatch" from the same file, seen here the same day).
        // That is the tool's error, not an answer of the NVR's: such a run, with no failure of
        // the NVR's, runs once more.
        let toolsOwn =
            r.stdout.contains("hypothesis.errors.FlakyFailure")
            || r.stdout.contains("hypothesis/internal/lambda_sources.py")
        if r.status != 0, toolsOwn, !r.stdout.contains("= FAILURES =") {
            r = try runProcess(Self.schemathesis, arguments, cwd: root)
        }
        // What failed first (CI shows only the start of a long message), then the summary and
        // what the server logged as its own errors.
        let found = r.stdout.components(separatedBy: "\n").drop {
            !$0.contains("= FAILURES =") && !$0.contains("= ERRORS =")
        }
        .prefix(60).joined(separator: "\n")
        let serverErrors = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").components(separatedBy: "\n")
            .filter { $0.contains(" error ") || $0.contains("critical") }.prefix(10).joined(separator: "\n")
        #expect(
            r.status == 0,
            "schemathesis found problems:\n\(found)\n--- server errors:\n\(serverErrors)\n--- summary:\n\(r.stdout.suffix(2500))\n\(r.stderr.suffix(1500))"
        )
        #expect(
            serve.isRunning,
            "nvr serve died under schemathesis:\n\(((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").suffix(3000))"
        )
        // Still answering (what schemathesis changed — settings, users — may differ).
        let health = try runProcess(
            "/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/api/health"])
        #expect(["200", "503"].contains(health.stdout), "\(health.stdout)")
    }
}
