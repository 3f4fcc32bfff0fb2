import Foundation
import NVRIndex
import NVRIndexPostgres
import TestSupport

/// The index's two backends, for tests that run against both: SQLite in a temporary folder,
/// PostgreSQL in a server of the test's own (initdb on a free loopback port).
enum IndexBackend: String, CaseIterable, CustomStringConvertible, Sendable {
    case sqlite, postgresql
    var description: String { rawValue }

    /// A fresh, empty index of this backend; `body` gets it, then it is thrown away.
    func withIndex(_ body: (any IndexStore) throws -> Void) throws {
        switch self {
        case .sqlite:
            let dir = TestEnvironment.tempDir("idx")
            defer { TestEnvironment.cleanup(dir) }
            try body(try IndexDatabase(path: dir + "/index.sqlite"))
        case .postgresql:
            let server = try PostgresFixture()
            try withExtendedLifetime(server) {
                try body(try PostgresIndex(location: try PostgresLocation(url: try server.makeDatabase())))
            }
        }
    }
}
