import Foundation
import GRDB
import NVRIndex

/// `nvr db migrate --to postgresql://…`: a SQLite index copied into an empty PostgreSQL one,
/// row for row with the same ids, in one snapshot of the SQLite file and one PostgreSQL
/// transaction (a copy that fails leaves PostgreSQL as empty as it was, to be tried again).
/// Both are at this build's newest schema, whose tables and columns are the same on both
/// backends (design/schema.md); PostgreSQL's own tables (nodes, leases, its migrations) stay
/// empty.
extension PostgresIndex {
    /// What was copied: rows per table, in the order copied.
    public struct ImportReport: Sendable {
        public var tables: [(table: String, rows: Int)] = []
        public var rows: Int { tables.reduce(0) { $0 + $1.rows } }
        public func rows(of table: String) -> Int? { tables.first { $0.table == table }?.rows }
    }

    /// Values bound in one INSERT at most (PostgreSQL takes 65 535 parameters)…
    static let importParameters = 30_000
    /// …and bytes of text and blobs (a frame index is kilobytes: long segments' far more;
    /// PostgreSQL refuses a message over 1 GB).
    static let importBytes = 8 << 20

    /// Copies `source` into this index, which must hold nothing yet. `progress` hears rows
    /// copied and rows in all.
    public func importIndex(from source: IndexDatabase, progress: (Int, Int) -> Void = { _, _ in }) throws
        -> ImportReport
    {
        // A write transaction on SQLite, though nothing is written: no other nvr command (a
        // token, a camera, a limit added meanwhile) changes what is being copied.
        try source.pool.writeWithoutTransaction { db in
            var result: ImportReport?
            // IMMEDIATE: the write lock from the first statement.
            try db.inTransaction(.immediate) {
                result = try copyAll(db, progress: progress)
                return .commit
            }
            guard let result else { throw IndexError("cannot migrate: the copy ended without a report") }
            return result
        }
    }

    private func copyAll(_ db: Database, progress: (Int, Int) -> Void) throws -> ImportReport {
        let tables = try Self.sqliteTablesInCopyOrder(db)
        var counts: [String: Int] = [:]
        for t in tables {
            counts[t] = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(t.quotedDatabaseIdentifier)")
        }
        let total = counts.values.reduce(0, +)
        // BEGIN and COMMIT may wait longer than a statement's usual 30 s; each INSERT is
        // bounded by importParameters and importBytes.
        return try transaction(timeout: .minutes(10)) { s in
            let columns = try Self.postgresColumns(s)
            try Self.refuseUnlessEmpty(s, tables: tables)
            // The one row PostgreSQL's first migration seeds; SQLite's replaces it.
            try s.execute("DELETE FROM run_counter")
            var report = ImportReport()
            var done = 0
            for table in tables {
                guard let types = columns[table] else {
                    throw IndexError("cannot migrate: the PostgreSQL index has no table \(table)")
                }
                let copied = try Self.copy(table, types: types, from: db, to: s) { n in
                    done += n
                    progress(done, total)
                }
                // Rows read, and rows PostgreSQL said each INSERT added (no count(*) scan of
                // a big table, which a statement's timeout could cut).
                guard copied.read == counts[table], copied.inserted == copied.read else {
                    throw IndexError(
                        "cannot migrate: \(table) has \(counts[table] ?? 0) rows in SQLite, \(copied.read) read and \(copied.inserted) inserted"
                    )
                }
                report.tables.append((table, copied.read))
            }
            try Self.advanceIdentities(s, tables: tables)
            return report
        }
    }

    /// One table's rows, in batches of one INSERT each; the rows read, and those PostgreSQL
    /// says it inserted.
    private static func copy(
        _ table: String, types: [String: String], from db: Database, to s: PostgresSession, copied: (Int) -> Void
    ) throws -> (read: Int, inserted: Int) {
        let rows = try Row.fetchCursor(db, sql: "SELECT * FROM \(table.quotedDatabaseIdentifier)")
        var names: [String] = []
        var batch: [PostgresValue] = []
        var inBatch = 0
        var bytes = 0
        var count = 0
        var inserted = 0
        func flush() throws {
            guard inBatch > 0 else { return }
            let row = "(" + PostgresIndex.marks(names.count) + ")"
            inserted +=
                try s.run(
                    "INSERT INTO \(PostgresSession.quoted(table)) (\(names.map(PostgresSession.quoted).joined(separator: ", "))) VALUES "
                        + Array(repeating: row, count: inBatch).joined(separator: ", "), batch
                ).changed
            copied(inBatch)
            batch.removeAll(keepingCapacity: true)
            inBatch = 0
            bytes = 0
        }
        while let row = try rows.next() {
            if names.isEmpty {
                names = Array(row.columnNames)
                for n in names where types[n] == nil {
                    throw IndexError("cannot migrate: the PostgreSQL index has no column \(table).\(n)")
                }
            }
            for (name, value) in zip(names, row.databaseValues) {
                let v = try converted(value, to: types[name] ?? "", at: "\(table).\(name)")
                switch v {
                case .bytes(let d): bytes += d.count
                case .text(let t): bytes += t.utf8.count
                default: bytes += 8
                }
                batch.append(v)
            }
            inBatch += 1
            count += 1
            if inBatch * names.count >= importParameters || bytes >= importBytes { try flush() }
        }
        try flush()
        return (count, inserted)
    }

    /// A SQLite value as the PostgreSQL column of `type` keeps it. SQLite stores what it is
    /// given whatever a column's type says: a value that does not fit stops the copy, named.
    static func converted(_ value: DatabaseValue, to type: String, at column: String) throws -> PostgresValue {
        switch (value.storage, type) {
        case (.null, _): return .null
        case (.int64(let i), "bigint"): return .int(i)
        case (.double(let d), "bigint") where d.rounded() == d && abs(d) < 9.0e18: return .int(Int64(d))
        case (.double(let d), "double precision"): return .double(d)
        case (.int64(let i), "double precision"): return .double(Double(i))
        case (.string(let t), "text"): return .text(t)
        case (.int64(let i), "text"): return .text(String(i))
        case (.blob(let b), "bytea"): return .bytes(b)
        case (.string(let t), "bytea"): return .bytes(Data(t.utf8))
        default:
            // The kind, not the value: a column may hold a password's hash.
            let kind: String
            switch value.storage {
            case .null: kind = "null"
            case .int64: kind = "an integer"
            case .double: kind = "a real number"
            case .string: kind = "text"
            case .blob: kind = "a blob"
            }
            throw IndexError("cannot migrate: \(column) holds \(kind) where PostgreSQL keeps \(type)")
        }
    }

    /// The SQLite index's tables, each after the tables its foreign keys name.
    static func sqliteTablesInCopyOrder(_ db: Database) throws -> [String] {
        let names = try String.fetchAll(
            db,
            sql: """
                SELECT name FROM sqlite_master WHERE type = 'table'
                AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE 'grdb\\_%' ESCAPE '\\' ORDER BY name
                """)
        var needs: [String: Set<String>] = [:]
        for t in names {
            let parents = try Row.fetchAll(db, sql: "PRAGMA foreign_key_list(\(t.quotedDatabaseIdentifier))")
                .compactMap { $0["table"] as String? }
            needs[t] = Set(parents).subtracting([t])
        }
        var ordered: [String] = []
        var left = names
        while !left.isEmpty {
            let ready = left.filter { needs[$0, default: []].isSubset(of: ordered) }
            guard !ready.isEmpty else {
                throw IndexError("cannot migrate: the SQLite tables' foreign keys form a cycle")
            }
            ordered += ready
            left.removeAll { ready.contains($0) }
        }
        return ordered
    }

    /// Every table's columns and their types, in the schema the index uses.
    private static func postgresColumns(_ s: PostgresSession) throws -> [String: [String: String]] {
        var tables: [String: [String: String]] = [:]
        for row in try s.run(
            "SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema()"
        ).rows {
            let (table, column, type) = try row.decode((String, String, String).self)
            tables[table, default: [:]][column] = type
        }
        return tables
    }

    /// An index that holds anything (a camera, a user, a node…) is not written over.
    private static func refuseUnlessEmpty(_ s: PostgresSession, tables: [String]) throws {
        for table in tables + ["node", "camera_lease"] where table != "run_counter" {
            let n = try s.scalar(Int64.self, "SELECT count(*) FROM \(PostgresSession.quoted(table))") ?? 0
            if n > 0 {
                throw IndexError(
                    "cannot migrate: the PostgreSQL index is not empty (\(n) rows in \(table)); migrate into a new database"
                )
            }
        }
    }

    /// Ids given by PostgreSQL from now on follow the copied ones.
    private static func advanceIdentities(_ s: PostgresSession, tables: [String]) throws {
        for row in try s.run(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() AND is_identity = 'YES'"
        ).rows {
            let (table, column) = try row.decode((String, String).self)
            guard tables.contains(table) else { continue }
            let t = PostgresSession.quoted(table)
            let c = PostgresSession.quoted(column)
            try s.execute(
                "SELECT setval(pg_get_serial_sequence(?, ?), max(\(c))) FROM \(t) HAVING max(\(c)) IS NOT NULL",
                [.text(t), .text(column)])
        }
    }
}
