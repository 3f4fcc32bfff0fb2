import Foundation
import TestSupport
import Testing

/// What `nvr` promises a person at a shell: a version, one plain line for every error (no Swift
/// type names, no Foundation error domains), units on sizes, and no file clobbered or left
/// half-written.
@Suite(.tags(.system)) struct CommandLineTests {
    static func nvr(_ args: [String]) throws -> ProcessResult { try runProcess(TestEnvironment.nvrExecutable, args) }

    /// One line on stderr, and none of the internal wordings users reported.
    static func expectPlain(_ r: ProcessResult, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let text = r.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(r.status != 0, "\(what): exit 0", sourceLocation: sourceLocation)
        #expect(!text.isEmpty && !text.contains("\n"), "\(what): not one line: \(text)", sourceLocation: sourceLocation)
        for word in ["Error(", "NSCocoaErrorDomain", "errno:", "descriptor:", "Missing value", "Usage:"] {
            #expect(!text.contains(word), "\(what): '\(word)' in: \(text)", sourceLocation: sourceLocation)
        }
    }

    @Test func versionAndPlainErrors() throws {
        let root = TestEnvironment.tempDir("cli")
        defer { TestEnvironment.cleanup(root) }
        let config = try writeConfig(root: root, plugins: TestEnvironment.buildDir)
        // Makes the storage root (and says so, once)
        #expect(try Self.nvr(["camera", "list", "--config", config]).status == 0)
        let version = try Self.nvr(["--version"])
        #expect(
            version.status == 0 && version.stdout.range(of: #"^\d+\.\d+\.\d+\n$"#, options: .regularExpression) != nil,
            "\(version.stdout)")

        Self.expectPlain(
            try Self.nvr(["retention", "set", "--max-size", "10", "--config", config]), "a size without a unit")
        Self.expectPlain(try Self.nvr(["retention", "set", "--config", config]), "retention set with nothing to set")
        #expect(try Self.nvr(["retention", "set", "--max-size", "60M", "--config", config]).status == 0)
        #expect(try Self.nvr(["camera", "add", "cam", "--plugin", "demo", "--config", config]).status == 0)
        let preRoll = try Self.nvr(["camera", "set", "cam", "--pre-roll", "-3", "--config", config])
        Self.expectPlain(preRoll, "a negative pre-roll")
        #expect(preRoll.stderr.contains("pre-roll"), "\(preRoll.stderr)")
        Self.expectPlain(
            try Self.nvr([
                "camera", "set", "cam", "--url", "rtsp://a/", "--option", "url=rtsp://b/", "--config", config,
            ]), "two URLs")
        Self.expectPlain(try Self.nvr(["camera", "list", "--config", root + "/missing.toml"]), "a missing config")

        // A storage root nvr may not create: the system's words, not Foundation's.
        let locked = root + "/locked"
        try FileManager.default.createDirectory(
            atPath: locked, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o500])
        try "[storage]\nroot = \"locked/inner\"\n".write(
            toFile: root + "/locked.toml", atomically: true, encoding: .utf8)
        if getuid() != 0 {  // root may write anywhere
            let r = try Self.nvr(["camera", "list", "--config", root + "/locked.toml"])
            Self.expectPlain(r, "an unwritable root")
            #expect(r.stderr.contains("ermission denied"), "\(r.stderr)")
        }
        // A port in use: said as such.
        let port = TestEnvironment.freePort()
        try FileManager.default.createDirectory(atPath: root + "/p", withIntermediateDirectories: true)
        let taken = try runProcess(
            "/usr/bin/python3",
            [
                "-c",
                """
                import socket, subprocess, sys
                s = socket.socket(); s.bind(("127.0.0.1", \(port))); s.listen()
                r = subprocess.run(sys.argv[1:], capture_output=True, text=True)
                print(r.returncode); print(r.stderr, file=sys.stderr)
                """, TestEnvironment.nvrExecutable, "serve", "--no-demo", "--config",
                try writeConfig(root: root + "/p", plugins: TestEnvironment.buildDir, httpBind: "127.0.0.1:\(port)"),
            ])
        #expect(
            taken.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1",
            "serve on a taken port: \(taken.stdout) \(taken.stderr)")
        #expect(taken.stderr.contains("cannot listen on 127.0.0.1:\(port): Address already in use"), "\(taken.stderr)")
        #expect(!taken.stderr.contains("errno") && !taken.stderr.contains("descriptor"), "\(taken.stderr)")
    }

    @Test func exportNeverClobbersNorLeavesHalfFiles() throws {
        let root = TestEnvironment.tempDir("cli-export")
        defer { TestEnvironment.cleanup(root) }
        let config = try writeConfig(root: root, plugins: TestEnvironment.buildDir)
        #expect(try Self.nvr(["camera", "add", "cam", "--plugin", "demo", "--config", config]).status == 0)
        let out = root + "/mine.mp4"
        try "precious".write(toFile: out, atomically: true, encoding: .utf8)
        let refused = try Self.nvr([
            "export", "--camera", "cam", "--start", "2026-01-01T00:00:00Z", "--end", "2026-01-01T00:01:00Z", "-o", out,
            "--config", config,
        ])
        Self.expectPlain(refused, "export over an existing file")
        #expect(refused.stderr.contains("--force"))
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "precious")
        // Nothing recorded in that range: the export fails, and neither the target nor a .partial is left.
        let empty = try Self.nvr([
            "export", "--camera", "cam", "--start", "2026-01-01T00:00:00Z", "--end", "2026-01-01T00:01:00Z", "-o",
            root + "/new.mp4", "--config", config,
        ])
        #expect(empty.status != 0)
        #expect(
            !FileManager.default.fileExists(atPath: root + "/new.mp4")
                && !FileManager.default.fileExists(atPath: root + "/new.mp4.partial"))
    }
}
