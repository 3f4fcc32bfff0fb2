import Foundation
import NVRIndex
import NVRIndexPostgres
import Testing

/// `[index] url` as an installer writes it, and the mistakes they make.
struct PostgresLocationTests {
    @Test func aURLNamesServerUserAndDatabase() throws {
        let l = try PostgresLocation(url: "postgresql://nvr@db.lan/cameras", environment: [:])
        #expect(l.host == "db.lan" && l.port == 5432 && l.user == "nvr" && l.database == "cameras")
        #expect(l.password == nil && l.tls == .disable)
        let tls = try PostgresLocation(
            url: "postgres://nvr@10.0.0.5:6543/nvr?sslmode=require", environment: ["NVR_INDEX_PASSWORD": "pw"])
        #expect(tls.port == 6543 && tls.tls == .require && tls.password == "pw")
        #expect("\(tls)" == "postgresql://nvr@10.0.0.5:6543/nvr?sslmode=require")
        let verified = try PostgresLocation(
            url: "postgresql://nvr@db/nvr?sslmode=verify-full&sslrootcert=/etc/nvr/ca.pem", environment: [:])
        #expect(verified.tls == .verifyFull && verified.rootCertificate == "/etc/nvr/ca.pem")
        #expect("\(verified)" == "postgresql://nvr@db:5432/nvr?sslmode=verify-full&sslrootcert=/etc/nvr/ca.pem")
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
        ("postgresql://nvr@h/db?sslmode=prefer", "sslmode must be"),
        ("postgresql://nvr@h/db?sslrootcert=/ca.pem", "goes with sslmode=verify-full"),
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
