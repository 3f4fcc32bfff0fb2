import Foundation
import NVRIndex
import NVRTime

/// The PostgreSQL schema's migrations, frozen once committed like the SQLite index's
/// (pinned in Tests/Fixtures/schema/postgresql/). Each is recorded in `nvr_migration`.
enum PostgresMigrations {
    static let all: [(name: String, sql: String)] = [
        (PostgresMigrationP1.name, PostgresMigrationP1.sql),
        (PostgresMigrationP2.name, PostgresMigrationP2.sql),
    ]

    /// The advisory lock key nodes take while migrating ("nvr-mig" in ASCII).
    static let lockKey: Int64 = 0x6e76_722d_6d69_67

    static func migrate(_ connections: PostgresConnections, upTo last: String? = nil) throws {
        try connections.transaction { s in
            try s.execute("SELECT pg_advisory_xact_lock(?)", [.int(lockKey)])
            // Looked for first: a role with read and write rights only (no CREATE) can use a
            // database someone else migrated.
            if try s.scalar(Bool.self, "SELECT to_regclass('nvr_migration') IS NOT NULL") != true {
                try s.execute("CREATE TABLE nvr_migration (name TEXT PRIMARY KEY, applied90k BIGINT NOT NULL)")
            }
            let done = Set(try s.run("SELECT name FROM nvr_migration").rows.map { try $0.decode(String.self) })
            let known = Set(all.map(\.name))
            if let newer = done.subtracting(known).sorted().first {
                throw IndexError(
                    "the index at \(connections.location) has schema \(newer), newer than this nvr knows: upgrade nvr")
            }
            for m in all {
                if !done.contains(m.name) {
                    for statement in statements(m.sql) { try s.execute(statement) }
                    try s.execute(
                        "INSERT INTO nvr_migration (name, applied90k) VALUES (?, ?)",
                        [.text(m.name), .int(Time90k.now())])
                }
                if m.name == last { break }
            }
        }
    }

    /// A migration's statements one by one (the extended protocol takes one at a time): split
    /// at semicolons ending a line; comments dropped.
    static func statements(_ sql: String) -> [String] {
        var out: [String] = []
        var current = ""
        for line in sql.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("--") || trimmed.isEmpty { continue }
            current += line + "\n"
            if trimmed.hasSuffix(";") {
                out.append(String(current.dropLast(2)))
                current = ""
            }
        }
        if !current.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { out.append(current) }
        return out
    }
}
