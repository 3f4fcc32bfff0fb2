import Testing
@testable import NVRCore

@Suite struct ConfigTests {
    @Test func parsesEveryKey() throws {
        let c = try NVRConfig.parse("""
            [storage]
            root = "/srv/nvr"
            [http]
            bind = "0.0.0.0:9000"
            [recording]
            segment_seconds = 30
            [plugins]
            dir = "/usr/lib/nvr"
            """)
        #expect(c.storageRoot == "/srv/nvr" && c.httpBind == "0.0.0.0:9000" && c.segmentSeconds == 30 && c.pluginsDir == "/usr/lib/nvr")
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

    @Test func parsesTimes() {
        #expect(Time90k.parse("1970-01-01T00:00:01Z") == 90_000)
        #expect(Time90k.parse("1970-01-01T00:00:01.5Z") == 135_000)
        #expect(Time90k.parse("1970-01-01T01:00:01+01:00") == 90_000)
        #expect(Time90k.parse("42") == 42)
        #expect(Time90k.parse("yesterday") == nil)
    }
}
