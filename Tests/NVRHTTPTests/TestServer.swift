import Foundation
import Logging
import NVRHTTP
import NVRIndex
import NVRPlayback
import NVRRecorder
import Synchronization
import TestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The HTTP server on a free loopback port, over a real index and storage root.
final class TestServer: Sendable {
    let server: HTTPServer
    let port: Int

    /// Starts the server and waits (without blocking a thread: tests share the concurrency
    /// pool, and a blocked thread can starve the server it waits for) until it listens.
    init(
        index: IndexDatabase, storage: StorageLayout, recorder: Recorder? = nil, maxViewSeconds: Int = 86_400,
        limits: ConnectionLimits = .init()
    ) async throws {
        // These tests are about the API's answers, not its logins (AuthTests are): no login.
        var options = HTTPServer.Options(
            bind: "127.0.0.1:0", allowUnauthenticated: true, maxViewSeconds: maxViewSeconds)
        options.connectionLimits = limits
        let server = try HTTPServer(
            index: index, storage: storage, recorder: recorder, options: options, logger: TestEnvironment.logger)
        self.server = server
        port = try await TestEnvironment.startServer("HTTP server") { onBound in try await server.run(onBound: onBound)
        }
    }

    deinit {
        let server = self.server
        Task { await server.shutdown() }
    }

    struct Answer {
        var status: Int
        var headers: [String: String]
        var body: Data
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
        func header(_ name: String) -> String? { headers.first { $0.key.lowercased() == name.lowercased() }?.value }
    }

    /// GETs (or HEADs, or any `method` with a `body`) a path with a real HTTP client.
    func get(_ path: String, headers: [String: String] = [:], method: String = "GET", body: Data? = nil)
        async throws -> Answer
    {
        var r = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        r.httpMethod = method
        r.httpBody = body
        for (k, v) in headers { r.setValue(v, forHTTPHeaderField: k) }
        r.timeoutInterval = 60
        let (data, response) = try await URLSession.shared.data(for: r)
        let http = response as! HTTPURLResponse
        var h: [String: String] = [:]
        for (k, v) in http.allHeaderFields { h["\(k)"] = "\(v)" }
        return Answer(status: http.statusCode, headers: h, body: data)
    }
}
