import Foundation
import NVRAccess
import NVRHTTP
import NVRIndex
import NVRPlayback
import NVRRecorder
import TestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The HTTP server with logins required, on a free loopback port, and a client that keeps
/// its own cookie (no shared cookie storage between tests).
final class AuthServer: Sendable {
    let server: HTTPServer
    let port: Int
    let index: IndexDatabase

    init(index: IndexDatabase, storage: StorageLayout, recorder: Recorder? = nil) async throws {
        self.index = index
        let server = try HTTPServer(
            index: index, storage: storage, recorder: recorder, options: .init(bind: "127.0.0.1:0"),
            logger: TestEnvironment.logger)
        self.server = server
        port = try await TestEnvironment.startServer("HTTP server with logins") { onBound in
            try await server.run(onBound: onBound)
        }
    }

    func stop() async { await server.shutdown() }

    struct Answer {
        var status: Int
        var headers: [String: String]
        var body: Data
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
        var text: String { String(decoding: body, as: UTF8.self) }
        func header(_ name: String) -> String? { headers.first { $0.key.lowercased() == name.lowercased() }?.value }
    }

    /// One request. `cookie` is sent as the session cookie, `token` as a Bearer token.
    func request(
        _ method: String, _ path: String, json: Any? = nil, cookie: String? = nil, token: String? = nil,
        csrf: String? = nil,
        headers: [String: String] = [:]
    ) async throws -> Answer {
        var r = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        r.httpMethod = method
        r.httpShouldHandleCookies = false
        if let json {
            r.httpBody = try JSONSerialization.data(withJSONObject: json)
            r.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let cookie { r.setValue("nvr_session=\(cookie)", forHTTPHeaderField: "Cookie") }
        if let token { r.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let csrf { r.setValue(csrf, forHTTPHeaderField: "X-CSRF-Token") }
        for (k, v) in headers { r.setValue(v, forHTTPHeaderField: k) }
        r.timeoutInterval = 60
        let (data, response) = try await Self.session.data(for: r)
        let http = response as! HTTPURLResponse
        var h: [String: String] = [:]
        for (k, v) in http.allHeaderFields { h["\(k)"] = "\(v)" }
        return Answer(status: http.statusCode, headers: h, body: data)
    }

    static let session: URLSession = {
        let c = URLSessionConfiguration.ephemeral
        c.httpCookieStorage = nil
        c.httpShouldSetCookies = false
        return URLSession(configuration: c)
    }()

    /// Logs in; returns the cookie's token and the CSRF token.
    func login(_ user: String, _ password: String) async throws -> (cookie: String, csrf: String) {
        let a = try await request("POST", "/api/login", json: ["user": user, "password": password])
        guard a.status == 200, let set = a.header("Set-Cookie"), let csrf = a.json["csrf"] as? String,
            let value = set.split(separator: ";").first?.split(separator: "=", maxSplits: 1).last
        else {
            throw FixtureError("login as \(user) failed: \(a.status) \(a.text)")
        }
        return (String(value), csrf)
    }
}
