import Foundation
import NVRAccess
import NVRIndex
import NVRPlayback
import NVRTime
import TestSupport
import Testing

/// Logins, roles, CSRF, sessions, tokens, throttling and the Host check, against the real
/// HTTP server and index, every route taken from the served OpenAPI document.
@Suite(.serialized) struct AuthTests {
    let root: String
    let index: IndexDatabase
    let storage: StorageLayout

    init() throws {
        root = TestEnvironment.tempDir("auth")
        storage = StorageLayout(root: root)
        try storage.prepare()
        index = try IndexDatabase(path: storage.indexPath)
        try index.addCamera(CameraRecord(name: "demo", plugin: "demo", config: "{}", created90k: Time90k.now()))
        try index.addCamera(CameraRecord(name: "yard", plugin: "demo", config: "{}", created90k: Time90k.now()))
        let accounts = Accounts(index: index)
        try accounts.add(name: "boss", password: "correct horse", role: .admin)
        try accounts.add(name: "kid", password: "battery staple", role: .viewer, cameras: ["yard"])
    }

    /// Every documented operation with its path's parameters filled in.
    func operations(_ server: AuthServer) async throws -> [(method: String, path: String, hasBody: Bool)] {
        let doc = try await server.request("GET", "/api/openapi.json").json
        let paths = try #require(doc["paths"] as? [String: [String: Any]])
        var out: [(String, String, Bool)] = []
        for (p, ops) in paths {
            let path = p.replacingOccurrences(of: "{name}", with: "demo").replacingOccurrences(of: "{id}", with: "1")
            for (m, op) in ops {
                let q = p.hasSuffix("/recordings") && m == "delete" ? "?start=0&end=90000" : ""
                out.append((m.uppercased(), path + q, (op as? [String: Any])?["requestBody"] != nil))
            }
        }
        return out.sorted { ($0.1, $0.0) < ($1.1, $1.0) }
    }

    @Test func everyRouteButLoginHealthAndTheDocumentNeedsAUser() async throws {
        let server = try await AuthServer(index: index, storage: storage)
        defer { Task { await server.stop() } }
        let ops = try await operations(server)
        #expect(ops.count >= 40)
        for op in ops {
            let a = try await server.request(op.method, op.path, json: op.hasBody ? [:] as [String: String] : nil)
            switch (op.method, op.path) {
            case ("POST", "/api/login"): #expect(a.status == 400, "login with no fields: \(a.status)")
            case ("GET", "/api/health"):
                #expect(a.status == 503 && a.json["details"] == nil, "health without a login: \(a.text)")
            case ("GET", "/api/openapi.json"): #expect(a.status == 200)
            case ("GET", "/api/node"), ("GET", "/api/node/segments/1"):
                // Public (nodes ask each other during an outage); a SQLite server is no node.
                #expect(a.status == 404 && a.json["error"] as? String == "not_found", "\(a.text)")
            default:
                #expect(a.status == 401, "\(op.method) \(op.path) without a login: \(a.status) \(a.text)")
                #expect(a.json["error"] as? String == "unauthorized")
            }
        }
        // A token or cookie that is wrong is refused the same way.
        #expect(try await server.request("GET", "/api/cameras", token: "nvr_nope").status == 401)
        #expect(try await server.request("GET", "/api/cameras", cookie: "nope").status == 401)
    }

    @Test func aViewerMayWatchItsCamerasAndChangeNothing() async throws {
        let server = try await AuthServer(index: index, storage: storage)
        defer { Task { await server.stop() } }
        let kid = try #require(try index.user(named: "kid"))
        let token = try TokenStore(index: index).create(for: kid, name: "test").token
        // Self-service calls (their own password, sessions, tokens, logging out, their own review
        // flags) are not changes to the NVR.
        let own: Set<String> = [
            "/api/logout", "/api/session/password", "/api/tokens/1", "/api/sessions/1", "/api/review/1/reviewed",
            "/api/review/reviewed",
        ]
        for op in try await operations(server)
        where ["POST", "PUT", "PATCH", "DELETE"].contains(op.method) && !own.contains(op.path)
            && op.path != "/api/login"
        {
            let a = try await server.request(op.method, op.path, json: op.hasBody ? ["name": "x"] : nil, token: token)
            #expect(a.status == 403, "viewer \(op.method) \(op.path): \(a.status) \(a.text)")
        }
        // Admin-only reads too.
        for path in [
            "/api/users", "/api/audit", "/api/retention", "/api/cameras/yard/config", "/api/discover", "/api/tls",
            "/api/cameras/yard/card/file?file=x",
        ] {
            #expect(try await server.request("GET", path, token: token).status == 403, "\(path)")
        }
        // Only the cameras it is given: the others do not exist for it.
        let list = try await server.request("GET", "/api/cameras", token: token).json
        #expect((list["cameras"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["yard"])
        #expect(try await server.request("GET", "/api/cameras/demo", token: token).status == 404)
        #expect(try await server.request("GET", "/api/cameras/yard", token: token).status == 200)
        #expect(
            try await server.request("GET", "/api/cameras/demo/view.mp4?start=0&end=90000", token: token).status == 404)
        // An export naming a camera it may not see fails as if that camera did not exist.
        let export = try await server.request(
            "GET", "/api/export.zip?cameras=yard,demo&start=0&end=90000", token: token)
        #expect(export.status == 404 && export.text.contains("'demo'"), "\(export.status) \(export.text)")
        let mine = try await server.request("GET", "/api/export.zip?cameras=yard&start=0&end=90000", token: token)
        #expect(mine.status == 404 && mine.text.contains("nothing recorded"), "\(mine.status) \(mine.text)")
    }

    /// PTZ: anyone who may watch a camera may ask what it offers; only admins and viewers
    /// given `ptz` may command, and only the cameras they see. (The demo camera has no PTZ:
    /// past the right check, it answers 409 no_ptz.)
    @Test func onlyAdminsAndViewersGivenPTZMayTurnCameras() async throws {
        let server = try await AuthServer(index: index, storage: storage)
        defer { Task { await server.stop() } }
        let kid = try #require(try index.user(named: "kid"))
        let token = try TokenStore(index: index).create(for: kid, name: "test").token
        let stop: [String: Any] = ["action": "stop"]
        var a = try await server.request("GET", "/api/cameras/yard/ptz", token: token)
        #expect(a.status == 409 && a.text.contains("no_ptz"), "\(a.status) \(a.text)")
        a = try await server.request("POST", "/api/cameras/yard/ptz", json: stop, token: token)
        #expect(a.status == 403 && a.text.contains("may not turn"), "\(a.status) \(a.text)")
        #expect(try await server.request("GET", "/api/session", token: token).json["ptz"] as? Bool == false)

        _ = try Accounts(index: index).update(name: "kid", role: nil, cameras: nil, ptz: true)
        a = try await server.request("POST", "/api/cameras/yard/ptz", json: stop, token: token)
        #expect(a.status == 409 && a.text.contains("no_ptz"), "\(a.status) \(a.text)")
        // A bad command is refused before the camera is asked.
        a = try await server.request("POST", "/api/cameras/yard/ptz", json: ["action": "move", "pan": 2], token: token)
        #expect(a.status == 400, "\(a.status) \(a.text)")
        // Still not a camera it does not see.
        a = try await server.request("POST", "/api/cameras/demo/ptz", json: stop, token: token)
        #expect(a.status == 403, "\(a.status) \(a.text)")
        #expect(try await server.request("GET", "/api/cameras/demo/ptz", token: token).status == 404)
        #expect(try await server.request("GET", "/api/session", token: token).json["ptz"] as? Bool == true)
        let users = try await server.request(
            "GET", "/api/users",
            token: try TokenStore(index: index).create(for: try #require(try index.user(named: "boss")), name: "b")
                .token)
        let listed = (users.json["users"] as? [[String: Any]])?.first { $0["name"] as? String == "kid" }
        #expect(listed?["ptz"] as? Bool == true, "\(users.text)")
    }

    /// Talk, the same way: only admins and viewers given `talk`, only for the cameras they see.
    /// (The demo camera cannot talk: past the right check, it answers 409 no_talk.)
    @Test func onlyAdminsAndViewersGivenTalkMayTalkThroughCameras() async throws {
        let server = try await AuthServer(index: index, storage: storage)
        defer { Task { await server.stop() } }
        let kid = try #require(try index.user(named: "kid"))
        let token = try TokenStore(index: index).create(for: kid, name: "test").token
        var a = try await server.request("GET", "/api/cameras/yard/talk", token: token)
        #expect(a.status == 403 && a.text.contains("may not talk through"), "\(a.status) \(a.text)")
        #expect(try await server.request("GET", "/api/session", token: token).json["talk"] as? Bool == false)
        _ = try Accounts(index: index).update(name: "kid", role: nil, cameras: nil, talk: true)
        a = try await server.request("GET", "/api/cameras/yard/talk", token: token)
        #expect(a.status == 409 && a.text.contains("synthetic camera has no speaker"), "\(a.status) \(a.text)")
        #expect(try await server.request("GET", "/api/cameras/demo/talk", token: token).status == 403)
        #expect(try await server.request("GET", "/api/session", token: token).json["talk"] as? Bool == true)
        // The right to talk is not the right to turn.
        #expect(
            try await server.request("POST", "/api/cameras/yard/ptz", json: ["action": "stop"], token: token).status
                == 403)
    }

    @Test func cookieChangesNeedTheCSRFTokenAndSessionsSurviveARestartUntilLogout() async throws {
        let first = try await AuthServer(index: index, storage: storage)
        let login = try await first.login("boss", "correct horse")
        // A change with the cookie alone (what a form on another site could send) is refused.
        var a = try await first.request(
            "PUT", "/api/cameras/demo/recording-settings", json: ["mode": "events"], cookie: login.cookie)
        #expect(a.status == 403 && a.json["error"] as? String == "csrf", "\(a.text)")
        a = try await first.request(
            "PUT", "/api/cameras/demo/recording-settings", json: ["mode": "events"], cookie: login.cookie, csrf: "guess"
        )
        #expect(a.status == 403)
        a = try await first.request(
            "PUT", "/api/cameras/demo/recording-settings", json: ["mode": "events"], cookie: login.cookie,
            csrf: login.csrf)
        #expect(a.status == 200 && a.json["mode"] as? String == "events", "\(a.text)")
        // JSON only: a form post (text/plain) is refused before anything else.
        a = try await first.request(
            "POST", "/api/clips", cookie: login.cookie, csrf: login.csrf, headers: ["Content-Type": "text/plain"])
        #expect(a.status == 415)

        // The session is in the index: a new server (a restart) knows it.
        await first.stop()
        let server = try await AuthServer(index: index, storage: storage)
        defer { Task { await server.stop() } }
        a = try await server.request("GET", "/api/session", cookie: login.cookie)
        #expect(a.status == 200 && a.json["user"] as? String == "boss" && a.json["csrf"] as? String == login.csrf)
        a = try await server.request("POST", "/api/logout", cookie: login.cookie, csrf: login.csrf)
        #expect(a.status == 204 && a.header("Set-Cookie")?.contains("Max-Age=0") == true)
        a = try await server.request("GET", "/api/session", cookie: login.cookie)
        #expect(a.status == 401 && a.json["error"] as? String == "session_expired")

        // The audit log says who did what.
        let admin = try await server.login("boss", "correct horse")
        let audit = try await server.request("GET", "/api/audit", cookie: admin.cookie).json
        let actions = (audit["entries"] as? [[String: Any]] ?? []).map {
            "\($0["user"] ?? "") \($0["action"] ?? "") \($0["target"] ?? "")"
        }
        #expect(actions.contains("boss camera.recording demo"))
        #expect(actions.contains { $0.hasPrefix("boss login") } && actions.contains { $0.hasPrefix("boss logout") })
    }

    /// An expired login's row does not stay in the index for ever: the next login removes it
    /// (and leaves live sessions alone).
    @Test func expiredSessionsArePurgedAtTheNextLogin() throws {
        let boss = try #require(try index.user(named: "boss"))
        let now = Time90k.now()
        func row(expires: Int64) -> SessionRecord {
            SessionRecord(
                tokenHash: Secrets.hash(Secrets.randomToken()), userID: boss.id!, csrf: "c",
                created90k: now - 100 * 90_000,
                expires90k: expires, address: nil, userAgent: nil)
        }
        let expired = try index.addSession(row(expires: now - 90_000))
        let live = try index.addSession(row(expires: now + 3600 * 90_000))
        let made = try SessionStore(index: index).create(user: boss, address: "127.0.0.1", userAgent: "test").session
        let ids = Set(try index.sessions().compactMap(\.id))
        #expect(!ids.contains(expired.id!), "the expired session is still in the index")
        #expect(ids.contains(live.id!) && ids.contains(made.id!))
    }

    @Test func wrongPasswordsAreSlowedDownPerUserAndPerAddress() async throws {
        let server = try await AuthServer(index: index, storage: storage)
        defer { Task { await server.stop() } }
        var statuses: [Int] = []
        let started = Date()
        for _ in 0..<20 {
            statuses.append(
                try await server.request("POST", "/api/login", json: ["user": "boss", "password": "wrong"]).status)
        }
        #expect(Array(statuses.prefix(5)) == Array(repeating: 401, count: 5), "\(statuses)")
        // After five, each try must wait 1, 2, 4… s after the last failure and is refused (429)
        // until then. A try that comes after its wait is checked again — on a loaded machine one
        // bcrypt check can take that long —, so how many more were checked is bounded by the
        // time that passed: k more checks need 1 + 2 + … + 2^(k−1) = 2^k − 1 seconds.
        let later = statuses.dropFirst(5)
        #expect(later.allSatisfy { $0 == 401 || $0 == 429 } && later.contains(429), "\(statuses)")
        let checkedAgain = later.filter { $0 == 401 }.count
        #expect(pow(2, Double(checkedAgain)) - 1 <= Date().timeIntervalSince(started), "\(statuses)")
        let throttled = try await server.request(
            "POST", "/api/login", json: ["user": "boss", "password": "correct horse"])
        #expect(throttled.status == 429 && Int(throttled.header("Retry-After") ?? "") ?? 0 >= 1, "\(throttled.text)")
        // The address is throttled too: another user name from it waits as well.
        #expect(
            try await server.request("POST", "/api/login", json: ["user": "kid", "password": "battery staple"]).status
                == 429)
    }

    @Test func tokensAreShownOnceStoredHashedAndRevocable() async throws {
        let server = try await AuthServer(index: index, storage: storage)
        defer { Task { await server.stop() } }
        let boss = try await server.login("boss", "correct horse")
        let made = try await server.request(
            "POST", "/api/tokens", json: ["name": "home assistant", "user": "kid"], cookie: boss.cookie, csrf: boss.csrf
        )
        let token = try #require(made.json["token"] as? String, "\(made.text)")
        let id = try #require(made.json["id"] as? Int)
        #expect(try await server.request("GET", "/api/session", token: token).json["user"] as? String == "kid")
        let listed = try await server.request("GET", "/api/tokens", cookie: boss.cookie)
        #expect(!listed.text.contains(token) && listed.text.contains("home assistant"))
        // Only a hash is stored.
        #expect(
            try index.tokens().allSatisfy {
                !String(decoding: $0.tokenHash, as: UTF8.self).contains(token) && $0.tokenHash.count == 32
            })
        #expect(
            try await server.request("DELETE", "/api/tokens/\(id)", cookie: boss.cookie, csrf: boss.csrf).status == 204)
        #expect(try await server.request("GET", "/api/session", token: token).status == 401)
    }

    @Test func requestsForOtherHostNamesAreRefused() async throws {
        let server = try await AuthServer(index: index, storage: storage)
        defer { Task { await server.stop() } }
        // DNS rebinding: a page of evil.example whose name now points at 127.0.0.1.
        let a = try await server.request("GET", "/api/health", headers: ["Host": "evil.example:\(server.port)"])
        #expect(a.status == 403 && a.json["error"] as? String == "host_not_allowed")
        #expect(
            try await server.request("GET", "/api/health", headers: ["Host": "localhost:\(server.port)"]).status == 503)
        // No CORS headers are sent.
        let b = try await server.request("GET", "/api/openapi.json", headers: ["Origin": "http://evil.example"])
        #expect(b.header("Access-Control-Allow-Origin") == nil)
    }

    @Test func usersAreManagedByAdminsAndPasswordsAreHashed() async throws {
        let server = try await AuthServer(index: index, storage: storage)
        defer { Task { await server.stop() } }
        let boss = try await server.login("boss", "correct horse")
        var a = try await server.request(
            "POST", "/api/users", json: ["name": "gran", "password": "short", "role": "viewer"], cookie: boss.cookie,
            csrf: boss.csrf)
        #expect(a.status == 400)
        a = try await server.request(
            "POST", "/api/users",
            json: ["name": "gran", "password": "long enough", "role": "viewer", "cameras": ["demo"]],
            cookie: boss.cookie, csrf: boss.csrf)
        #expect(a.status == 201 && (a.json["cameras"] as? [String]) == ["demo"], "\(a.text)")
        #expect(try index.user(named: "gran")?.passwordHash.hasPrefix("$2") == true)
        let gran = try await server.login("gran", "long enough")
        // A new password ends the user's sessions.
        a = try await server.request(
            "PATCH", "/api/users/gran", json: ["password": "another one", "cameras": NSNull()], cookie: boss.cookie,
            csrf: boss.csrf)
        #expect(a.status == 200 && a.json["cameras"] == nil, "\(a.text)")
        #expect(try await server.request("GET", "/api/session", cookie: gran.cookie).status == 401)
        #expect(
            try await server.request("DELETE", "/api/users/boss", cookie: boss.cookie, csrf: boss.csrf).status == 409)
        #expect(
            try await server.request("DELETE", "/api/users/gran", cookie: boss.cookie, csrf: boss.csrf).status == 204)
        #expect(
            try await server.request("POST", "/api/login", json: ["user": "gran", "password": "another one"]).status
                == 401)
    }
}
