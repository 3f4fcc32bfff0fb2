import Foundation
import NVRIndexPostgres
import TestSupport
import Testing

/// What every test of recorder nodes starts from: a PostgreSQL of its own, small GStreamer
/// cameras, a folder for the nodes, the shared index, and the config of a machine that only
/// administers; the cameras added (named by `name`) and retention told to keep no free space.
/// The test removes `folder` when it ends.
final class ClusterSetup {
    let server: PostgresFixture
    let url: String
    let cameras: [RTSPCameraFixture]
    let folder: String
    let index: PostgresIndex
    /// The administering machine's config.
    let cli: String
    /// Camera id → name.
    private(set) var ids: [Int64: String] = [:]

    init(_ label: String, cameras count: Int, name: (Int) -> String) throws {
        server = try PostgresFixture()
        url = try server.makeDatabase()
        cameras = try FailoverTests.cameras(count)
        folder = TestEnvironment.tempDir(label)
        index = try PostgresIndex(location: try PostgresLocation(url: url, environment: [:]))
        cli = try FailoverTests.cliConfig(folder: folder, url: url)
        for (i, cam) in cameras.enumerated() {
            let add = try nvr("camera", "add", name(i), "--plugin", "rtsp", "--url", cam.url)
            guard add.status == 0 else { throw FixtureError("camera add \(name(i)): \(add.stderr)") }
        }
        let retention = try nvr("retention", "set", "--min-free", "0%")
        guard retention.status == 0 else { throw FixtureError("retention set: \(retention.stderr)") }
        ids = Dictionary(uniqueKeysWithValues: try index.cameras().compactMap { c in c.id.map { ($0, c.name) } })
    }

    /// `nvr ARGS --config <cli>`.
    func nvr(_ args: String...) throws -> ProcessResult { try nvr(args) }
    func nvr(_ args: [String]) throws -> ProcessResult {
        try runProcess(TestEnvironment.nvrExecutable, args + ["--config", cli])
    }

    /// An API token of the first admin, made from the administering machine.
    func token(_ name: String) throws -> String {
        let made = try nvr("token", "add", "--user", "admin", "--name", name, "--quiet")
        guard made.status == 0 else { throw FixtureError("token add: \(made.stderr)") }
        return made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
