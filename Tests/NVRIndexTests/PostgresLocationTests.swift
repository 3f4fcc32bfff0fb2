import Foundation
import NVRIndex
import NVRIndexPostgres
import Testing

/// `[index] url` as an installer writes it, and the mistakes they make.
struct PostgresLocationTests {
    @Test func aURLNamesServerUserAndDatabase() throws {
        let l = try PostgresLocation(url: "postgresql://nvr@db.lan/cameras", environment: [:])
        #expect(l.host == "db.lan" && l.port == 5432 && l.user == "nvr" && l.database == "cameras")
        #expect(l.password == nil && !l.requireTLS)
        let tls = try PostgresLocation(
            url: "postgres://nvr@10.0.0.5:6543/nvr?sslmode=require", environment: ["NVR_INDEX_PASSWORD": "pw"])
        #expect(tls.port == 6543 && tls.requireTLS && tls.password == "pw")
        #expect("\(tls)" == "postgresql://nvr@10.0.0.5:6543/nvr?sslmode=require")
    }

    @Test(arguments: [
        ("mysql://nvr@h/db", "must look like"),
        ("postgresql://nvr:pw@h/db", "must not hold a password"),
        ("postgresql://h/db", "no user"),
        ("postgresql://nvr@h", "no database"),
        ("postgresql://nvr@h/a/b", "no database"),
        ("postgresql://nvr@h:0/db", "out of range"),
        ("postgresql://nvr@h/db?pool=3", "unknown option"),
        ("not a url at all", "must look like"),
    ])
    func mistakesAreSaidInOneLine(_ url: String, _ said: String) {
        #expect {
            _ = try PostgresLocation(url: url, environment: [:])
        } throws: { ($0 as? IndexError).map { "\($0)".contains(said) && !"\($0)".contains("\n") } ?? false }
    }

    @Test func anUnreadablePasswordFileIsSaid() {
        #expect {
            _ = try PostgresLocation(url: "postgresql://nvr@h/db", passwordFile: "/nonexistent/pw", environment: [:])
        } throws: { "\($0)".contains("cannot read the index password file /nonexistent/pw") }
    }
}
