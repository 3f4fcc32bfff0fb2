import Foundation
import TestSupport
import Testing

/// `make deb` as an admin would use it (CI runs as root on a throwaway machine): the package
/// builds, installs with dpkg, its unit's ExecStart run as the package's user with the packaged
/// config records a camera and answers /metrics with no Swift toolchain on the path, and the
/// package removes cleanly.
@Suite(.serialized, .tags(.system)) struct DebianPackageTests {
    @Test func packageInstallsRecordsAndRemoves() async throws {
        guard getuid() == 0 else {
            Issue.record("installing a package needs root (CI runs the tests as root)")
            return
        }
        for path in ["/usr/bin/nvr", "/etc/nvr", "/lib/systemd/system/nvr.service"]
        where FileManager.default.fileExists(atPath: path) {
            Issue.record("\(path) exists: an nvr is installed on this machine, and this test would replace it")
            return
        }
        // Before the package is installed (only this suite installs it, so only here is /etc/nvr
        // known to be absent): no config anywhere is said, not silent.
        try Self.aForgottenConfigIsSaid()

        // At the lowest priority: the release build takes the CPU the cameras of the suites
        // running beside it (scripts/test.sh) leave, not the other way round.
        let built = try await TestEnvironment.blocking {
            try runProcess("/usr/bin/nice", ["-n", "19", TestEnvironment.repoRoot + "/scripts/build-deb.sh"])
        }
        try #require(built.status == 0, "build-deb.sh: \(built.stderr.suffix(3000))")
        let deb = TestEnvironment.repoRoot + "/" + (built.stdout.split(separator: "\n").last.map(String.init) ?? "")
        let contents = try runProcess("/usr/bin/dpkg-deb", ["--contents", deb]).stdout
        for f in [
            "./usr/bin/nvr", "./usr/lib/nvr/libnvr-plugin-rtsp.so", "./usr/lib/nvr/libnvr-plugin-demo.so",
            "./etc/nvr/nvr.toml",
            "./lib/systemd/system/nvr.service", "./usr/share/nvr/models/person-ssdlite.onnx",
            "./usr/lib/nvr/libonnxruntime.so.",
        ] {
            #expect(contents.contains(f), "\(f) not in the package:\n\(contents)")
        }
        let control = try runProcess("/usr/bin/dpkg-deb", ["--field", deb, "Depends", "Version"]).stdout
        #expect(
            control.contains("libavformat") && control.contains("libturbojpeg") && !control.contains("swift"),
            "\(control)")

        let install = try runProcess("/usr/bin/dpkg", ["-i", deb])
        try #require(install.status == 0, "dpkg -i: \(install.stdout) \(install.stderr)")
        defer { Self.purge() }
        // The Swift runtime is inside the binaries: nothing of /opt/swift is loaded.
        for bin in ["/usr/bin/nvr", "/usr/lib/nvr/libnvr-plugin-rtsp.so"] {
            let ldd = try runProcess("/usr/bin/ldd", [bin]).stdout
            #expect(!ldd.contains("swift") && !ldd.contains("not found"), "\(bin) links:\n\(ldd)")
        }
        #expect(try runProcess("/usr/bin/id", ["-u", "nvr"]).status == 0, "no nvr user")
        let state = try FileManager.default.attributesOfItem(atPath: "/var/lib/nvr")
        #expect(state[.ownerAccountName] as? String == "nvr" && (state[.posixPermissions] as? Int) == 0o750, "\(state)")

        // The admin's edits: a free port, short segments for the test.
        let port = TestEnvironment.freePort()
        let packaged = try String(contentsOfFile: "/etc/nvr/nvr.toml", encoding: .utf8)
        #expect(packaged.contains("root = \"/var/lib/nvr\"") && packaged.contains("dir = \"/usr/lib/nvr\""))
        try packaged.replacingOccurrences(of: "bind = \"127.0.0.1:8080\"", with: "bind = \"127.0.0.1:\(port)\"")
            .replacingOccurrences(of: "segment_seconds = 60", with: "segment_seconds = 2")
            .write(toFile: "/etc/nvr/nvr.toml", atomically: false, encoding: .utf8)

        // Admin commands find /etc/nvr/nvr.toml without --config, from any folder.
        let asNVR = { (args: [String]) in
            try runProcess("/usr/sbin/runuser", ["-u", "nvr", "--", "/usr/bin/nvr"] + args, cwd: "/")
        }
        let add = try asNVR(["camera", "add", "yard", "--plugin", "demo"])
        #expect(add.status == 0, "camera add: \(add.stderr)")
        // Person detection from what the package carries (runtime and model, nothing from /usr/local).
        let detect = try asNVR(["camera", "set", "yard", "--detect", "person"])
        #expect(detect.status == 0, "camera set --detect: \(detect.stderr)")
        let user = try runProcess(
            "/bin/sh",
            ["-c", "echo 'correct horse' | /usr/sbin/runuser -u nvr -- /usr/bin/nvr user add boss --role admin"],
            cwd: "/")
        #expect(user.status == 0, "user add: \(user.stderr)")
        let token = try asNVR(["token", "add", "--user", "boss", "--name", "prometheus", "--quiet"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!token.isEmpty)

        // The unit's ExecStart, as the unit's user, with a bare PATH.
        let unit = try String(contentsOfFile: "/lib/systemd/system/nvr.service", encoding: .utf8)
        let exec = try #require(
            unit.split(separator: "\n").first { $0.hasPrefix("ExecStart=") }?.dropFirst("ExecStart=".count))
        #expect(exec.contains("--no-demo"))
        #expect(
            unit.contains("NoNewPrivileges=yes") && unit.contains("ProtectSystem=strict")
                && unit.contains("ReadWritePaths=/var/lib/nvr")
                && unit.contains("PrivateTmp=yes") && unit.contains("UMask=0027"))
        let serve = Process()
        serve.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
        serve.arguments = ["-u", "nvr", "--"] + exec.split(separator: " ").map(String.init)
        serve.environment = ["PATH": "/usr/bin:/bin"]
        serve.currentDirectoryURL = URL(fileURLWithPath: "/")
        let log = TestEnvironment.tempDir("deb") + "/serve.log"
        defer { TestEnvironment.cleanup((log as NSString).deletingLastPathComponent) }
        FileManager.default.createFile(atPath: log, contents: nil)
        serve.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        serve.standardOutput = serve.standardError
        try serve.run()
        defer {
            if serve.isRunning {
                serve.terminate()
                serve.waitUntilExit()
            }
        }
        var metrics = ""
        let recorded = try await TestEnvironment.eventually(timeout: 60) {
            metrics = try runProcess(
                "/usr/bin/curl", ["-s", "-H", "Authorization: Bearer \(token)", "http://127.0.0.1:\(port)/metrics"]
            ).stdout
            return (MetricsTests.value(metrics, "nvr_camera_segments_total{camera=\"yard\"}") ?? 0) >= 1
        }
        let logText = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(recorded, "no segment in /metrics:\n\(metrics)\n\(logText)")
        let files =
            FileManager.default.enumerator(atPath: "/var/lib/nvr/recordings")?.allObjects.compactMap { $0 as? String }
            .filter { $0.hasSuffix(".mp4") } ?? []
        #expect(!files.isEmpty, "no segment file under /var/lib/nvr/recordings")
        #expect(!logText.contains("demo\": starting"), "the demo camera was added:\n\(logText)")
        #expect(
            logText.contains("detection: /usr/share/nvr/models/person-ssdlite.onnx (ssd, 300x300")
                && logText.contains("(/usr/lib/nvr/libonnxruntime.so."),
            "the packaged model did not load:\n\(logText)")
        let camera = try runProcess(
            "/usr/bin/curl",
            ["-s", "-H", "Authorization: Bearer \(token)", "http://127.0.0.1:\(port)/api/cameras/yard"]
        ).stdout
        #expect(camera.contains("\"detection\":\"person\""), "\(camera)")
        // SIGTERM to nvr itself, as systemd's KillSignal does (runuser would die of it instead).
        _ = try runProcess("/usr/bin/pkill", ["-TERM", "-P", String(serve.processIdentifier)])
        serve.waitUntilExit()
        let stopped = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(serve.terminationStatus == 0 && stopped.contains("nvr serve: stopped"), "nvr serve: \(stopped)")
        #expect(try MetricsTests.promtoolCheckMetrics(metrics).status == 0)

        let removed = try runProcess("/usr/bin/dpkg", ["-P", "nvr"])
        #expect(removed.status == 0, "dpkg -P: \(removed.stderr)")
        #expect(
            !FileManager.default.fileExists(atPath: "/usr/bin/nvr")
                && !FileManager.default.fileExists(atPath: "/etc/nvr/nvr.toml"))
        #expect(
            removed.stdout.contains("kept in /var/lib/nvr"),
            "purge says nothing about the recordings: \(removed.stdout)")
    }

    /// With no --config, $NVR_CONFIG, ./nvr.toml or /etc/nvr, nvr says it uses the defaults and
    /// where its storage root is; with $NVR_CONFIG the file is found from any folder.
    static func aForgottenConfigIsSaid() throws {
        let dir = TestEnvironment.tempDir("cli-noconfig")
        defer { TestEnvironment.cleanup(dir) }
        let r = try runProcess(
            "/usr/bin/env", ["-u", "NVR_CONFIG", TestEnvironment.nvrExecutable, "camera", "list"], cwd: dir)
        #expect(
            r.stderr.contains("creating a new, empty storage root \(dir)/Storage")
                && r.stderr.contains("no config file"), "\(r.stderr)")
        try FileManager.default.createDirectory(atPath: dir + "/elsewhere", withIntermediateDirectories: true)
        let config = try writeConfig(root: dir + "/elsewhere", plugins: TestEnvironment.buildDir)
        let found = try runProcess(
            "/usr/bin/env", ["NVR_CONFIG=\(config)", TestEnvironment.nvrExecutable, "camera", "list"], cwd: "/")
        #expect(found.status == 0 && found.stderr.contains("storage.root of \(config)"), "\(found.stderr)")
    }

    /// Leaves the machine as it was: package, recordings, user.
    static func purge() {
        _ = try? runProcess("/usr/bin/dpkg", ["-P", "nvr"])
        try? FileManager.default.removeItem(atPath: "/var/lib/nvr")
        _ = try? runProcess("/usr/sbin/userdel", ["nvr"])
        _ = try? runProcess("/usr/sbin/groupdel", ["nvr"])
    }
}
