import ArgumentParser
import Foundation
import NVRIndex
import NVRIndexPostgres
import NVRPlayback
import NVRStorage

/// `nvr db migrate --to postgresql://…`: the SQLite index copied into an empty PostgreSQL
/// database, recordings staying where they are, then proven with the integrity check run on the
/// copy. nvr.toml is left as it is: the command prints the `[index]` lines that switch to the
/// copy, and the SQLite file stays (the way back).
struct DBMigrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Copy the SQLite index into an empty PostgreSQL database and check the copy against the files.",
        discussion:
            "Needs nvr serve stopped. The password comes from --password-file or NVR_INDEX_PASSWORD, never the URL.")
    @OptionGroup var global: GlobalOptions
    @Option(help: "The PostgreSQL database: postgresql://user@host:5432/database[?sslmode=…].") var to: String
    @Option(help: "A file holding the database user's password.") var passwordFile: String?

    func run() throws {
        let config = try global.load()
        if let url = config.indexURL {
            let shown = (try? PostgresLocation(url: url, environment: [:]).description) ?? "PostgreSQL"
            throw CommandFailure("the index is already on PostgreSQL (\(shown)): nothing to migrate")
        }
        let storage = StorageLayout(root: config.storageRoot)
        guard FileManager.default.fileExists(atPath: storage.indexPath) else {
            throw CommandFailure("no SQLite index at \(storage.indexPath): nothing to migrate")
        }
        let passwordFile = self.passwordFile.map {
            $0.hasPrefix("/") ? $0 : FileManager.default.currentDirectoryPath + "/" + $0
        }
        do {
            // No recording while the copy is taken: rows written after it would be lost.
            let held = try ServeLock(storage: storage)
            defer { withExtendedLifetime(held) {} }
            let location = try PostgresLocation(url: to, passwordFile: passwordFile)
            let source = try IndexDatabase(path: storage.indexPath)
            let target = try PostgresIndex(location: location)
            // Nor a server on the target while it fills.
            try target.holdServeLock()
            defer { target.releaseServeLock() }
            let bar = ProgressBar(label: "copying")
            let report = try target.importIndex(from: source) { bar.update($0, $1) }
            bar.finish()
            let counted = ["camera", "segment", "event", "user"].map { "\(report.rows(of: $0) ?? 0) \($0) rows" }
            print("copied \(report.rows) rows (\(counted.joined(separator: ", "))) into \(location)")
            // Said before the check: the copy is committed whatever the check finds.
            let file = NVRConfig.locate(path: global.config) ?? "nvr.toml"
            print("\nTo use it, put in \(file) and start nvr serve:\n")
            print("[index]\nurl = \"\(to)\"")
            if let passwordFile { print("password_file = \"\(passwordFile)\"") }
            print("\n\(storage.indexPath) stays as it is (at this build's schema).\n")

            // This command holds the root's serve lock: no server records, so rows left
            // writing and fresh files without rows are crash leftovers, and are reported.
            let check = IntegrityCheck(index: target, storage: storage, logger: makeLogger())
            let problems = try check.run(deep: false, repair: false, holdingLock: true)
            if problems.isEmpty {
                print("ok: index and files agree (nvr db check on PostgreSQL)")
            } else {
                printTable(
                    ["PROBLEM", "FILE", "DETAIL"], problems.map { [$0.kind.rawValue, $0.path, $0.detail] })
                print(
                    "\(problems.count) problems: the files disagree with the index (with the SQLite one too); nvr db check --repair mends them once nvr.toml names PostgreSQL"
                )
            }
            if !problems.isEmpty { throw ExitCode(1) }
        } catch let e as IndexError {
            throw CommandFailure("\(e)")
        } catch let e as ConfigError {
            throw CommandFailure(e.description)
        }
    }
}
