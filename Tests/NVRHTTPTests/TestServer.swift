import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import NVRCore
import NVRHTTP
import NVRIndex
import Synchronization
import TestSupport

/// The HTTP server on a free loopback port, over a real index and storage root.
final class TestServer: Sendable {
    let server: HTTPServer
    let port: Int
    private let done = DispatchSemaphore(value: 0)

    init(index: IndexDatabase, storage: StorageLayout, recorder: Recorder? = nil, maxViewSeconds: Int = 86_400) throws {
        server = try HTTPServer(index: index, storage: storage, recorder: recorder,
                                options: .init(bind: "127.0.0.1:0", maxViewSeconds: maxViewSeconds), logger: TestEnvironment.logger)
        let bound = DispatchSemaphore(value: 0)
        let port = Mutex(0)
        let server = self.server, done = self.done
        Task {
            try? await server.run { p in port.withLock { $0 = p }; bound.signal() }
            done.signal()
        }
        guard bound.wait(timeout: .now() + 20) == .success else { throw FixtureError("HTTP server did not start") }
        self.port = port.withLock { $0 }
    }

    deinit {
        let server = self.server
        Task { await server.shutdown() }
        _ = done.wait(timeout: .now() + 10)
    }

    struct Answer {
        var status: Int
        var headers: [String: String]
        var body: Data
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
        func header(_ name: String) -> String? { headers.first { $0.key.lowercased() == name.lowercased() }?.value }
    }

    /// GETs (or HEADs) a path with a real HTTP client.
    func get(_ path: String, headers: [String: String] = [:], method: String = "GET") async throws -> Answer {
        var r = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        r.httpMethod = method
        for (k, v) in headers { r.setValue(v, forHTTPHeaderField: k) }
        r.timeoutInterval = 60
        let (data, response) = try await URLSession.shared.data(for: r)
        let http = response as! HTTPURLResponse
        var h: [String: String] = [:]
        for (k, v) in http.allHeaderFields { h["\(k)"] = "\(v)" }
        return Answer(status: http.statusCode, headers: h, body: data)
    }
}
