import Foundation
import Logging
import NIOCore
import NVRIndex
import PostgresNIO

/// A value bound to a statement: what the index's columns hold (booleans are stored as 0/1
/// integers, as in the SQLite index, so the two backends' rows and SQL read alike).
enum PostgresValue: Sendable {
    case null
    case int(Int64)
    case double(Double)
    case text(String)
    case bytes(Data)

    init(_ v: Int64?) { self = v.map { .int($0) } ?? .null }
    init(_ v: Int) { self = .int(Int64(v)) }
    init(_ v: String?) { self = v.map { .text($0) } ?? .null }
    init(_ v: Bool) { self = .int(v ? 1 : 0) }
    init(_ v: Data) { self = .bytes(v) }
}

/// One connection's statements, written with `?` placeholders as the SQLite index's are
/// (numbered `$1…` here; the index's SQL never has a `?` of its own).
struct PostgresSession {
    let connection: PostgresConnection
    let logger: Logger

    /// Runs one statement; its rows, and how many rows it changed.
    /// How long a statement may wait for its answer by default: then its connection is closed
    /// (a server gone silent, a network cut) and the call fails instead of hanging.
    static let statementTimeout: TimeAmount = .seconds(30)

    @discardableResult
    func run(_ sql: String, _ args: [PostgresValue] = [], timeout: TimeAmount = statementTimeout) throws -> (
        rows: [PostgresRow], changed: Int
    ) {
        var binds = PostgresBindings(capacity: args.count)
        for a in args {
            switch a {
            case .null: binds.appendNull()
            case .int(let v): binds.append(v)
            case .double(let v): binds.append(v)
            case .text(let v): binds.append(v)
            case .bytes(let v): binds.append(ByteBuffer(bytes: v))
            }
        }
        let query = PostgresQuery(unsafeSQL: Self.numbered(sql), binds: binds)
        let connection = connection
        // On the event loop: close without waiting (waiting there would deadlock).
        let timer = connection.eventLoop.scheduleTask(in: timeout) { _ = connection.close() as EventLoopFuture<Void> }
        defer { timer.cancel() }
        do {
            let result = try connection.query(query, logger: logger).wait()
            return (result.rows, result.metadata.rows ?? 0)
        } catch {
            if connection.isClosed {
                throw IndexError(
                    "index query failed: no answer from the index (\(Self.describe(error)))", retryable: true)
            }
            let state = Self.sqlState(error)
            throw IndexError(
                "index query failed: \(Self.describe(error))", retryable: Self.isRetryable(sqlState: state),
                diskFull: state == "53100")
        }
    }

    func execute(_ sql: String, _ args: [PostgresValue] = [], timeout: TimeAmount = statementTimeout) throws {
        try run(sql, args, timeout: timeout)
    }

    /// Rows as records (their Codable keys name the columns, as for GRDB).
    func fetchAll<R: Decodable>(_ type: R.Type, _ sql: String, _ args: [PostgresValue] = []) throws -> [R] {
        try run(sql, args).rows.map { try R(from: PostgresRowDecoder(row: $0.makeRandomAccess())) }
    }

    func fetchOne<R: Decodable>(_ type: R.Type, _ sql: String, _ args: [PostgresValue] = []) throws -> R? {
        try fetchAll(type, sql, args).first
    }

    /// The first column of the first row (nil for no row or NULL).
    func scalar<T: PostgresDecodable>(
        _ type: T.Type, _ sql: String, _ args: [PostgresValue] = [], timeout: TimeAmount = statementTimeout
    ) throws -> T? {
        guard let row = try run(sql, args, timeout: timeout).rows.first, let cell = row.first(where: { _ in true })
        else { return nil }
        guard cell.bytes != nil else { return nil }
        do { return try cell.decode(T.self) } catch {
            throw IndexError("index column \(cell.columnName) is not a \(T.self)")
        }
    }

    /// Inserts a record into `table`; its new id when the table numbers its rows (a nil `id`
    /// is left to the table's identity column).
    /// With `unlessConflictOn`, a row clashing on that unique column is not inserted: nil.
    @discardableResult
    func insert<R: Encodable>(
        _ record: R, into table: String, returningID: Bool = true, unlessConflictOn unique: String? = nil
    ) throws -> Int64? {
        let columns = try PostgresRowEncoder.columns(of: record).filter { !($0.name == "id" && $0.isNull) }
        let names = columns.map { Self.quoted($0.name) }.joined(separator: ", ")
        let marks = columns.map { _ in "?" }.joined(separator: ", ")
        let sql =
            "INSERT INTO \(table) (\(names)) VALUES (\(marks))"
            + (unique.map { " ON CONFLICT (\(Self.quoted($0))) DO NOTHING" } ?? "")
            + (returningID ? " RETURNING id" : "")
        let rows = try run(sql, columns.map(\.value)).rows
        guard returningID else { return nil }
        guard let id = try rows.first?.first(where: { _ in true })?.decode(Int64.self) else {
            if unique != nil { return nil }
            throw IndexError("insert into \(table) returned no id")
        }
        return id
    }

    /// Updates the row whose `key` column matches the record's; none is an error, as for
    /// GRDB's `update` (a record never inserted, or deleted meanwhile).
    func update<R: Encodable>(_ record: R, in table: String, key: String = "id") throws {
        let columns = try PostgresRowEncoder.columns(of: record)
        guard let keyColumn = columns.first(where: { $0.name == key }) else {
            throw IndexError("a \(R.self) has no \(key) to update by")
        }
        let others = columns.filter { $0.name != key }
        let sets = others.map { "\(Self.quoted($0.name)) = ?" }.joined(separator: ", ")
        let changed = try run(
            "UPDATE \(table) SET \(sets) WHERE \(Self.quoted(key)) = ?", others.map(\.value) + [keyColumn.value]
        ).changed
        guard changed > 0 else { throw IndexError("no row in \(table) with that \(key) to update") }
    }

    /// Inserts or replaces the row with the record's `key` (GRDB's `save` for tables keyed by
    /// a camera).
    func save<R: Encodable>(_ record: R, in table: String, key: String) throws {
        let columns = try PostgresRowEncoder.columns(of: record)
        let names = columns.map { Self.quoted($0.name) }
        let sets = columns.filter { $0.name != key }.map {
            "\(Self.quoted($0.name)) = excluded.\(Self.quoted($0.name))"
        }
        try execute(
            """
            INSERT INTO \(table) (\(names.joined(separator: ", "))) VALUES (\(names.map { _ in "?" }.joined(separator: ", ")))
            ON CONFLICT (\(Self.quoted(key))) DO \(sets.isEmpty ? "NOTHING" : "UPDATE SET " + sets.joined(separator: ", "))
            """, columns.map(\.value))
    }

    /// `?` placeholders numbered as PostgreSQL wants them.
    static func numbered(_ sql: String) -> String {
        var out = ""
        out.reserveCapacity(sql.utf8.count + 16)
        var n = 0
        for ch in sql {
            if ch == "?" {
                n += 1
                out += "$\(n)"
            } else {
                out.append(ch)
            }
        }
        return out
    }

    /// The SQLSTATE PostgreSQL answered with, if it answered.
    static func sqlState(_ error: any Error) -> String? {
        (error as? PSQLError)?.serverInfo?[.sqlState]
    }

    /// States worth trying again: no connection (class 08), the server shutting down (57P0x),
    /// serialization failures and deadlocks (40001, 40P01), out of resources (class 53).
    /// Not constraint violations, syntax or missing rows: trying again cannot help those.
    static func isRetryable(sqlState: String?) -> Bool {
        guard let s = sqlState else { return false }
        return s.hasPrefix("08") || s.hasPrefix("53") || s.hasPrefix("57P0") || s == "40001" || s == "40P01"
    }

    /// A column name as SQL: `user` is a reserved word in PostgreSQL.
    static func quoted(_ name: String) -> String { "\"\(name)\"" }

    /// What went wrong, in one line: PostgreSQL's own message when it sent one (PSQLError's
    /// description hides it, to keep queries out of logs by default).
    static func describe(_ error: any Error) -> String {
        if let e = error as? PSQLError {
            if let message = e.serverInfo?[.message] {
                return message + (e.serverInfo?[.detail].map { " (\($0))" } ?? "")
            }
            return "\(e.code)" + (e.underlying.map { ": \($0)" } ?? "")
        }
        return "\(error)"
    }
}
