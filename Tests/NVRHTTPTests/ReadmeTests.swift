import Foundation
import TestSupport
import Testing

/// Every `sh` block of README.md, run as written, in order, in one shell (a newcomer's terminal),
/// in a fresh folder on whatever day the tests run: each command must exit 0.
///
/// One stand-in: `make run` and `make test` in the first block. `make test` is what is running
/// this test, and `make run` would build with `swift build`, which waits for the lock this
/// `swift test` holds. So both are checked with `make -n` (the targets exist and expand), and
/// `make run`'s last step — `nvr serve` from the binaries this run built, recording the demo
/// camera into ./Storage — is started in the background as the README's next block expects.
@Suite(.serialized, .tags(.system)) struct ReadmeTests {
    struct Block {
        let line: Int
        let text: String
    }

    static func shellBlocks(_ markdown: String) -> [Block] {
        var blocks: [Block] = []
        var current: [String]?
        var start = 0
        for (i, line) in markdown.components(separatedBy: "\n").enumerated() {
            if current == nil, line == "```sh" {
                current = []
                start = i + 2
            } else if current != nil, line == "```" {
                blocks.append(Block(line: start, text: current!.joined(separator: "\n")))
                current = nil
            } else if current != nil {
                current!.append(line)
            }
        }
        return blocks
    }

    @Test func everyShellBlockOfTheReadmeRuns() throws {
        let readme = try String(contentsOfFile: TestEnvironment.repoRoot + "/README.md", encoding: .utf8)
        let blocks = Self.shellBlocks(readme)
        #expect(blocks.count >= 8, "found \(blocks.count) sh blocks")
        #expect(blocks.first?.text.contains("make run") == true)
        // The README's own ports: they must be free for its commands to work as written.
        let busy = try runProcess(
            "/bin/sh",
            [
                "-c",
                "ss -Htln '( sport = :8080 or sport = :8081 or sport = :8082 or sport = :8083 or sport = :8554 or sport = :1935 or sport = :8000 or sport = :8001 or sport = :8555 )'",
            ])
        try #require(
            busy.stdout.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty,
            "ports the README uses are taken:\n\(busy.stdout)")

        let dir = TestEnvironment.tempDir("readme")
        defer { TestEnvironment.cleanup(dir) }
        for name in [".build", "Makefile", "scripts", "Tests"] {
            try FileManager.default.createSymbolicLink(
                atPath: dir + "/" + name, withDestinationPath: TestEnvironment.repoRoot + "/" + name)
        }
        var script = """
            set -euo pipefail
            cd '\(dir)'
            # Whatever was started in the background (nvr serve, cameras, simulators) stops with the
            # script; what has not after 10 s (a simulator killed before it set up its handlers,
            # which then ignores SIGTERM) is killed, so a failed block never leaves the test waiting.
            trap 'kill $(jobs -p) 2>/dev/null || true; for i in $(seq 1 100); do [ -z "$(jobs -pr)" ] && break; sleep 0.1; done; [ -z "$(jobs -pr)" ] || kill -9 $(jobs -pr) 2>/dev/null; wait 2>/dev/null' EXIT
            make() {
              case "$1" in
                run) command make -n run >/dev/null && command make deps-run >/dev/null
                     .build/debug/nvr serve > serve.log 2>&1 &
                     for i in $(seq 1 50); do grep -q 'listening on' serve.log && break; sleep 0.2; done
                     grep -q 'listening on' serve.log ;;
                test) command make -n test >/dev/null ;;
                *) command make "$@" ;;
              esac
            }

            """
        for (i, b) in blocks.enumerated() {
            script += "echo \"=== block \(i + 1) of \(blocks.count), README.md line \(b.line)\" >&2\n\(b.text)\n"
        }
        script += "echo '=== all blocks ran' >&2\n"
        try script.write(toFile: dir + "/readme.sh", atomically: true, encoding: .utf8)
        // Output into files, not pipes: a camera started in the background must not keep the
        // test waiting for the end of a pipe it inherited.
        let run = try runProcess("/bin/bash", ["-c", "bash readme.sh > readme.out 2> readme.err"], cwd: dir)
        let r = ProcessResult(
            status: run.status, stdout: (try? String(contentsOfFile: dir + "/readme.out", encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: dir + "/readme.err", encoding: .utf8)) ?? "")
        let serveLog = (try? String(contentsOfFile: dir + "/serve.log", encoding: .utf8)) ?? ""
        #expect(
            r.status == 0 && r.stderr.contains("=== all blocks ran"),
            "README block failed (exit \(r.status)); the last lines:\n\(r.stderr.suffix(4000))\n--- stdout:\n\(r.stdout.suffix(2000))\n--- nvr serve:\n\(serveLog.suffix(3000))"
        )
        // What the blocks made is what the README says they make.
        let probe = try runProcess(
            "/usr/bin/ffprobe",
            ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", dir + "/last.mp4"])
        #expect(
            (Double(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) > 30,
            "last.mp4: \(probe.stdout) \(probe.stderr)")
        #expect(
            FileManager.default.fileExists(atPath: dir + "/clip.mp4")
                && FileManager.default.fileExists(atPath: dir + "/x3-video.mp4"))
        #expect(
            r.stdout.contains("nvr_camera_up{camera=\"porch\"} 1.0"),
            "porch not up in /metrics:\n\(r.stdout.suffix(2000))")
    }
}
