import Foundation
import NVRHTTP
import NVRIndex
import NVRPlayback
import TestSupport
import Testing

/// What a hostile or broken client gets from the HTTP server, over real sockets to a real
/// server: an answer and a close for every malformed request, a timeout for headers sent too
/// slowly, an end to idle kept-alive connections, and a cap on connections per address —
/// while normal requests go on being served.
@Suite struct ConnectionHygieneTests {
    final class Served: Sendable {
        let root = TestEnvironment.tempDir("hygiene")
        let server: TestServer
        init(_ limits: ConnectionLimits = .init()) async throws {
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            let storage = StorageLayout(root: root)
            server = try await TestServer(
                index: try IndexDatabase(path: storage.indexPath), storage: storage, limits: limits)
        }
        var port: Int { server.port }

        func stillServes() async throws -> Bool {
            try await server.get("/api/cameras").status == 200
        }
    }

    static let host = "Host: 127.0.0.1\r\n"

    /// The seven requests found to hang a connection, each with the answer it must get.
    static let malformed: [(name: String, request: [UInt8], status: Int)] = [
        (
            "a 100 kB header line",
            Array("GET /api/cameras HTTP/1.1\r\n\(host)X-Big: \(String(repeating: "a", count: 100_000))\r\n\r\n".utf8),
            431
        ),
        (
            "3,000 headers",
            Array(
                ("GET /api/cameras HTTP/1.1\r\n\(host)" + (0..<3000).map { "X-H\($0): v\r\n" }.joined() + "\r\n").utf8),
            431
        ),
        ("a 100 kB path", Array("GET /\(String(repeating: "a", count: 100_000)) HTTP/1.1\r\n\(host)\r\n".utf8), 414),
        (
            "a 100 kB query",
            Array("GET /api/cameras?x=\(String(repeating: "a", count: 100_000)) HTTP/1.1\r\n\(host)\r\n".utf8), 414
        ),
        (
            "a 100 kB Range",
            Array(
                "GET /api/cameras HTTP/1.1\r\n\(host)Range: bytes=\(String(repeating: "1", count: 100_000))\r\n\r\n"
                    .utf8), 431
        ),
        ("the method FOO", Array("FOO /api/cameras HTTP/1.1\r\n\(host)\r\n".utf8), 501),
        (
            "a NUL in the path",
            Array("GET /api/cameras/cam1".utf8) + [0] + Array("/timeline HTTP/1.1\r\n\(host)\r\n".utf8), 400
        ),
    ]

    @Test(arguments: 0..<malformed.count)
    func aMalformedRequestIsAnsweredAndClosedWithinASecond(_ i: Int) async throws {
        let s = try await Served()
        let (name, request, status) = Self.malformed[i]
        let c = try RawTCPConnection(port: s.port)
        let started = Date()
        c.send(request)
        let closed = await c.readUntilClosed(seconds: 1)
        #expect(closed, "\(name): closed within 1 s")
        let answer = try #require(
            c.response,
            "\(name): answered (\(c.received.count) bytes: \(String(decoding: c.received.prefix(200), as: UTF8.self)))")
        #expect(answer.status == status, "\(name)")
        #expect(answer.headers["connection"] == "close", "\(name)")
        #expect(answer.headers["content-type"]?.hasPrefix("application/json") == true, "\(name)")
        let json = try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any]
        #expect(json?["error"] is String && json?["message"] is String, "\(name): a JSON error")
        #expect(Date().timeIntervalSince(started) < 1.5)
        #expect(try await s.stillServes(), "\(name): normal requests are still served")
    }

    @Test func keepAliveAndPipelinedRequestsAreUntouched() async throws {
        let s = try await Served()
        // Two requests in one write, the second a POST whose 20 kB body has no line break: the
        // guard must not take the body for an over-long request line.
        let body = "{\"user\":\"" + String(repeating: "x", count: 20_000) + "\"}"
        let c = try RawTCPConnection(port: s.port)
        c.send(
            "GET /api/cameras HTTP/1.1\r\n\(Self.host)\r\nPOST /api/login HTTP/1.1\r\n\(Self.host)Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        )
        let deadline = Date().addingTimeInterval(5)
        var text = ""
        while Date() < deadline {
            c.poll()
            text = String(decoding: c.received, as: UTF8.self)
            if text.components(separatedBy: "HTTP/1.1 ").count >= 3 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        let statuses = text.components(separatedBy: "HTTP/1.1 ").dropFirst().map { String($0.prefix(3)) }
        #expect(statuses.count == 2 && statuses.first == "200", "\(statuses)")
        #expect(!statuses.contains("414") && !statuses.contains("431") && !statuses.contains("408"), "\(statuses)")
        #expect(!c.closed, "the connection stays open for more requests")
    }

    /// `curl --http2` on http:// asks to upgrade to h2c: the server ignores the Upgrade (as RFC
    /// 9110 allows) and answers over HTTP/1.1, then closes (the HTTP parser reads nothing after
    /// an upgrade request). Before, it answered nothing at all.
    @Test func anUpgradeToAnythingButAWebSocketIsAnsweredAndClosed() async throws {
        let s = try await Served()
        let c = try RawTCPConnection(port: s.port)
        c.send(
            "GET /api/cameras HTTP/1.1\r\n\(Self.host)Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n"
        )
        #expect(await c.readUntilClosed(seconds: 2), "closed after its answer")
        let answer = try #require(c.response, "answered: \(String(decoding: c.received.prefix(200), as: UTF8.self))")
        #expect(answer.status == 200)
        #expect(answer.headers["connection"] == "close")
        #expect(try await s.stillServes())
    }

    /// The upgrader takes any `Upgrade` for an attempt, with or without `Connection: upgrade`:
    /// an h2c one without it was left unanswered and open for ever.
    @Test func anUpgradeHeaderWithoutConnectionUpgradeIsAnswered() async throws {
        let s = try await Served()
        let c = try RawTCPConnection(port: s.port)
        c.send("GET /api/cameras HTTP/1.1\r\n\(Self.host)Upgrade: h2c\r\n\r\n")
        let deadline = Date().addingTimeInterval(2)
        while c.response == nil && Date() < deadline {
            c.poll()
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(c.response?.status == 200, "answered: \(String(decoding: c.received.prefix(200), as: UTF8.self))")
        #expect(try await s.stillServes())
    }

    /// Slowloris: 200 connections send a header byte every 5 s, each well inside any per-read
    /// timeout, never finishing. The product's header timeout (10 s from the first byte) ends
    /// each with 408, while normal requests go on being served.
    @Test func slowHeadersAreCutByTheTimeoutWhileOthersAreServed() async throws {
        let s = try await Served()
        let timeout = Double(ConnectionLimits().headerTimeout.nanoseconds) / 1e9
        var slow: [RawTCPConnection] = []
        for _ in 0..<200 {
            let c = try RawTCPConnection(port: s.port)
            c.send("GET /api/cameras HTTP/1.1\r\n")
            slow.append(c)
        }
        let started = Date()
        var served = 0
        var lastByte = started
        while Date().timeIntervalSince(started) < timeout + 3, slow.contains(where: { !$0.closed }) {
            let sendNow = Date().timeIntervalSince(lastByte) >= 5
            if sendNow { lastByte = Date() }
            for c in slow where !c.closed {
                if sendNow { c.send("X") }
                c.poll()
            }
            if try await s.stillServes() { served += 1 }
            try await Task.sleep(for: .milliseconds(500))
        }
        for c in slow { c.poll() }
        let open = slow.filter { !$0.closed }.count
        #expect(open == 0, "\(open) of 200 slow connections still open \(timeout + 3) s after they began")
        let timedOut = slow.filter { $0.response?.status == 408 }.count
        #expect(timedOut == 200, "answered 408: \(timedOut) of 200")
        #expect(served >= 10, "normal requests were served meanwhile: \(served)")
        let first = slow.compactMap { $0.closedAt?.timeIntervalSince(started) }.min() ?? 0
        let last = slow.compactMap { $0.closedAt?.timeIntervalSince(started) }.max() ?? 99
        #expect(first > timeout - 1 && last < timeout + 2.5, "closed from \(first) s to \(last) s after the start")
        #expect(try await s.stillServes())
        let metrics = try await s.server.get("/metrics")
        #expect(
            String(decoding: metrics.body, as: UTF8.self).contains(
                #"nvr_http_refused_connections_total{status="408"} 200"#))
    }

    @Test func anIdleKeptAliveConnectionIsClosed() async throws {
        var limits = ConnectionLimits()
        limits.idleTimeout = .seconds(1)
        let s = try await Served(limits)
        let c = try RawTCPConnection(port: s.port)
        c.send("GET /api/cameras HTTP/1.1\r\n\(Self.host)\r\n")
        let answered = Date()
        #expect(await c.readUntilClosed(seconds: 4), "closed after the idle timeout")
        #expect(c.response?.status == 200, "the request was answered first")
        let idle = (c.closedAt ?? .distantFuture).timeIntervalSince(answered)
        #expect(idle > 0.8 && idle < 3, "closed \(idle) s after its answer")
        let metrics = String(decoding: try await s.server.get("/metrics").body, as: UTF8.self)
        #expect(
            metrics.contains("nvr_http_idle_closed_connections_total 1"),
            "\(metrics.split(separator: "\n").filter { $0.contains("nvr_http_") })")
    }

    @Test func anAddressOverItsCapGets503AndOthersAreServed() async throws {
        var limits = ConnectionLimits()
        limits.maxConnectionsPerAddress = 3
        let s = try await Served(limits)
        // One at a time: the server sets connections up on several threads, so ones opened at
        // once may be admitted in any order.
        var held: [RawTCPConnection] = []
        for _ in 0..<3 {
            held.append(try RawTCPConnection(port: s.port, source: "127.0.0.2"))
            try await Task.sleep(for: .milliseconds(100))
        }
        let over = try RawTCPConnection(port: s.port, source: "127.0.0.2")
        #expect(await over.readUntilClosed(seconds: 1), "one connection over the cap is closed")
        #expect(over.response?.status == 503)
        for c in held {
            c.poll()
            #expect(!c.closed, "those under the cap stay open")
        }
        // Another address is not affected; 127.0.0.1 is the test's own client.
        #expect(try await s.stillServes())
        // One of the three closes: the address may connect again.
        held.removeFirst().close()
        try await Task.sleep(for: .milliseconds(200))
        let again = try RawTCPConnection(port: s.port, source: "127.0.0.2")
        again.send("GET /api/cameras HTTP/1.1\r\n\(Self.host)Connection: close\r\n\r\n")
        #expect(await again.readUntilClosed(seconds: 2))
        #expect(again.response?.status == 200)
        let metrics = String(decoding: try await s.server.get("/metrics").body, as: UTF8.self)
        #expect(metrics.contains(#"nvr_http_refused_connections_total{status="503"} 1"#))
        #expect(metrics.contains("nvr_http_max_connections_per_address 3"))
        withExtendedLifetime(held) {}
    }
}
