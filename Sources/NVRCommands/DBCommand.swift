import ArgumentParser
import Foundation
import NVRStorage

/// `nvr db …`: the index itself.
struct DBCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "db", abstract: "Check the index against the files, or move it to PostgreSQL.",
        subcommands: [Check.self, DBMigrate.self])

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Find rows without files, files without rows, size mismatches and unfinished rows; exit 1 while any remain.",
            discussion: "Safe while `nvr serve` records (its live segments are skipped); --repair needs it stopped.")
        @OptionGroup var global: GlobalOptions
        @Flag(
            help:
                "Also walk every file's fragments, compare frame counts with the index, and decode each segment's first key frame."
        ) var deep = false
        @Flag(
            help:
                "Fix what is safe: re-index damaged or unfinished segments from their files, drop rows whose files are gone, move unknown files to <root>/trash/."
        ) var repair = false
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let (_, storage, index) = try global.open()
            if repair { try NodesCommand.refuseOutsideNodes(index, "db check --repair") }
            // Its rows' files are not in the index yet: repair would move them to trash/.
            let journal = IndexJournal(path: storage.indexJournalPath)
            if repair, !journal.isEmpty {
                throw CommandFailure(
                    "\(storage.indexJournalPath) holds rows the index has not taken yet: start nvr serve (it writes them first), then repair"
                )
            }
            if repair, let aside = journal.setAsideCopies.first {
                throw CommandFailure(
                    "\(aside) is a damaged index journal whose rows' files repair would move to trash/: look at it, move it away, then repair"
                )
            }
            let check = IntegrityCheck(index: index, storage: storage, logger: makeLogger())
            let bar = ProgressBar(label: "checking")
            var problems: [IntegrityCheck.Problem]
            do { problems = try check.run(deep: deep, repair: repair) { bar.update($0, $1) } } catch let e
                as ConfigError
            {
                throw CommandFailure(e.description)
            }
            bar.finish()
            var remaining = problems
            if repair {
                remaining = try check.run(deep: deep, repair: false)
            }
            if json {
                try printJSON(["problems": problems, "remaining": remaining])
            } else if problems.isEmpty {
                print("ok: index and files agree")
            } else {
                printTable(
                    ["PROBLEM", "FILE", "DETAIL", "REPAIR"],
                    problems.map { [$0.kind.rawValue, $0.path, $0.detail, $0.repaired ?? "-"] })
                if repair {
                    print(remaining.isEmpty ? "repaired: index and files agree" : "\(remaining.count) problems remain")
                }
            }
            problems = remaining
            if !problems.isEmpty { throw ExitCode(1) }
        }
    }
}
