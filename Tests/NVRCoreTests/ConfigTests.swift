import Foundation
import NVRCommands
import NVRStorage
import NVRTime
import Testing

@Suite struct ConfigTests {
    @Test func parsesEveryKey() throws {
        let c = try NVRConfig.parse(
            """
            [storage]
            root = "/srv/nvr"
            [http]
            bind = "0.0.0.0:9000"
            [recording]
            segment_seconds = 30
            [plugins]
            dir = "/usr/lib/nvr"
            """)
        #expect(
            c.storageRoot == "/srv/nvr" && c.httpBind == "0.0.0.0:9000" && c.segmentSeconds == 30
                && c.pluginsDir == "/usr/lib/nvr")
    }

    @Test func defaultsWhenEmpty() throws {
        let c = try NVRConfig.parse("")
        #expect(c.storageRoot == "./Storage" && c.httpBind == "127.0.0.1:8080" && c.segmentSeconds == 60)
    }

    @Test func rejectsTyposAndBadValues() {
        #expect(throws: ConfigError.self) { try NVRConfig.parse("[recording]\nsegment_secs = 5") }
        #expect(throws: ConfigError.self) { try NVRConfig.parse("[recording]\nsegment_seconds = 0") }
        #expect(throws: ConfigError.self) { try NVRConfig.parse("[storge]\nroot = \"x\"") }
        #expect(throws: ConfigError.self) { try NVRConfig.parse("not toml at all [") }
    }

    @Test func findsTheConfigLikeOtherDaemons() {
        let none: (String) -> Bool = { _ in false }
        #expect(
            NVRConfig.locate(path: "/x/given.toml", environment: ["NVR_CONFIG": "/env.toml"], exists: { _ in true })
                == "/x/given.toml")
        #expect(
            NVRConfig.locate(path: nil, environment: ["NVR_CONFIG": "/env.toml"], exists: { _ in true }) == "/env.toml")
        #expect(
            NVRConfig.locate(path: nil, environment: [:], exists: { _ in true }, trusted: { _ in true }) == "nvr.toml")
        // Another user's ./nvr.toml (a shared folder) is passed over.
        #expect(
            NVRConfig.locate(path: nil, environment: [:], exists: { _ in true }, trusted: { _ in false })
                == "/etc/nvr/nvr.toml")
        #expect(
            NVRConfig.locate(path: nil, environment: [:], exists: { $0 == "/etc/nvr/nvr.toml" }) == "/etc/nvr/nvr.toml")
        // /etc/nvr this user cannot look into: still chosen, so the error can say why.
        #expect(NVRConfig.locate(path: nil, environment: [:], exists: { $0 == "/etc/nvr" }) == "/etc/nvr/nvr.toml")
        #expect(NVRConfig.locate(path: nil, environment: ["NVR_CONFIG": ""], exists: none) == nil)
    }

    @Test func relativePathsAreRelativeToTheFile() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nvr-config-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir + "/etc", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try """
        [storage]
        root = "../data"
        [http]
        tls_cert = "tls/cert.pem"
        tls_key = "/abs/key.pem"
        [plugins]
        dir = "plugins"
        """.write(toFile: dir + "/etc/nvr.toml", atomically: true, encoding: .utf8)
        let c = try NVRConfig.load(path: dir + "/etc/nvr.toml", environment: [:])
        #expect(c.storageRoot == dir + "/data" && c.tlsCert == dir + "/etc/tls/cert.pem" && c.tlsKey == "/abs/key.pem")
        #expect(c.pluginsDir == dir + "/etc/plugins" && c.source == dir + "/etc/nvr.toml")
        // storage.root left out: the default stays relative to the working directory.
        try "[recording]\nsegment_seconds = 5\n".write(toFile: dir + "/etc/nvr.toml", atomically: true, encoding: .utf8)
        #expect(try NVRConfig.load(path: dir + "/etc/nvr.toml", environment: [:]).storageRoot == "./Storage")
    }

    /// [index] and [cluster]: a PostgreSQL index and this server's node name.
    @Test func indexAndClusterKeys() throws {
        let c = try NVRConfig.parse(
            """
            [index]
            url = "postgresql://nvr@db.lan/nvr"
            password_file = "pw"
            [cluster]
            node = "rack-1_b"
            advertise_url = "https://rack1.lan:8443"
            """)
        #expect(c.indexURL == "postgresql://nvr@db.lan/nvr" && c.indexPasswordFile == "pw")
        #expect(c.clusterNode == "rack-1_b" && c.advertiseURL == "https://rack1.lan:8443")
        func refused(_ text: String, _ said: String) {
            #expect {
                try NVRConfig.parse(text)
            } throws: { "\($0)".contains(said) }
        }
        refused("[index]\nurl = \"postgresql://nvr:pw@db/nvr\"", "must not hold a password")
        refused("[index]\nurl = 5", "index.url must be a string")
        refused("[cluster]\nnode = \"a\"", "cluster.node needs [index] url")
        refused("[index]\nurl = \"postgresql://n@h/d\"\n[cluster]\nnode = \"a b\"", "cluster.node must be")
        refused("[index]\nurl = \"postgresql://n@h/d\"\n[cluster]\nnode = \"a\"\nadvertise_url = \"ftp://x\"", "http")
        refused("[cluster]\nnodes = \"a\"", "unknown key cluster.nodes")
        #expect(!NVRConfig.isNodeName("") && !NVRConfig.isNodeName(String(repeating: "a", count: 65)))
        #expect(!NVRConfig.isNodeName("../x") && NVRConfig.isNodeName("Node_9-x"))
    }

    @Test func parsesTimes() {
        #expect(Time90k.parse("1970-01-01T00:00:01Z") == 90_000)
        #expect(Time90k.parse("1970-01-01T00:00:01.5Z") == 135_000)
        #expect(Time90k.parse("1970-01-01T01:00:01+01:00") == 90_000)
        #expect(Time90k.parse("42") == 42)
        #expect(Time90k.parse("yesterday") == nil)
    }
}
