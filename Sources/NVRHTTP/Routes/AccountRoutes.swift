import Foundation
import HTTPTypes
import Hummingbird
import NVRAccess
import NVRIndex
import NVRPluginHost
import NVRTime

/// Users, API tokens, login sessions and the audit log.
struct AccountRoutes: IndexedRoutes {
    let index: any IndexStore
    let accounts: Accounts
    let sessions: SessionStore
    let tokens: TokenStore
    let audit: AuditLog

    func register(on router: Router<NVRContext>) {
        // Users (admin).
        router.get("/api/users") { _, c in
            try admin(c)
            return try await offload { [index] in try JSON.response(["users": try index.users().map(UserJSON.init)]) }
        }
        router.post("/api/users") { r, c in try await addUser(r, c) }
        router.patch("/api/users/{name}") { r, c in try await changeUser(r, c) }
        router.delete("/api/users/{name}") { _, c in
            let who = try admin(c)
            let name = c.parameters.get("name") ?? ""
            guard name.lowercased() != who.name.lowercased() else {
                throw APIError(.conflict, "conflict", "you cannot remove yourself")
            }
            try await accessChange { [accounts] in try accounts.remove(name: name) }
            audit.record(who.name, "user.remove", target: name, address: c.remoteAddress)
            return Response(status: .noContent)
        }
        // API tokens: an admin's for anyone; everyone sees and removes their own.
        router.get("/api/tokens") { _, c in
            let who = try identity(c)
            return try await offload { [index] in
                let users = Dictionary(
                    uniqueKeysWithValues: try index.users().compactMap { u in u.id.map { ($0, u.name) } })
                let mine = try index.tokens(userID: who.isAdmin ? nil : (who.userID ?? -1))
                return try JSON.response(["tokens": mine.map { TokenJSON($0, user: users[$0.userID] ?? "?") }])
            }
        }
        router.post("/api/tokens") { r, c in try await addToken(r, c) }
        router.delete("/api/tokens/{id}") { _, c in
            let who = try identity(c)
            guard let id = Int64(c.parameters.get("id") ?? "") else {
                throw APIError.badRequest("a token id is a number")
            }
            try await offload { [index] in
                guard let t = try index.tokens().first(where: { $0.id == id }), who.isAdmin || t.userID == who.userID
                else {
                    throw APIError.notFound("no token \(id)")
                }
                _ = try index.removeToken(id: id)
            }
            audit.record(who.name, "token.remove", target: String(id), address: c.remoteAddress)
            return Response(status: .noContent)
        }
        // Login sessions: an admin's view of all; everyone sees and ends their own.
        router.get("/api/sessions") { _, c in
            let who = try identity(c)
            return try await offload { [index] in
                let users = Dictionary(
                    uniqueKeysWithValues: try index.users().compactMap { u in u.id.map { ($0, u.name) } })
                var current: Int64?
                if case .session(let id, _) = who.via { current = id }
                let list = try index.sessions(userID: who.isAdmin ? nil : (who.userID ?? -1))
                return try JSON.response([
                    "sessions": list.map {
                        SessionRowJSON($0, user: users[$0.userID] ?? "?", current: $0.id == current)
                    }
                ])
            }
        }
        router.delete("/api/sessions/{id}") { _, c in
            let who = try identity(c)
            guard let id = Int64(c.parameters.get("id") ?? "") else {
                throw APIError.badRequest("a session id is a number")
            }
            try await offload { [index, sessions] in
                guard let s = try index.sessions().first(where: { $0.id == id }), who.isAdmin || s.userID == who.userID
                else {
                    throw APIError.notFound("no session \(id)")
                }
                try sessions.revoke(id: id)
            }
            audit.record(who.name, "session.revoke", target: String(id), address: c.remoteAddress)
            return Response(status: .noContent)
        }
        router.get("/api/audit") { r, c in
            try admin(c)
            let q = Query(request: r)
            let limit = try q.int("limit", in: 1...1000) ?? 100
            let before = try q.int("before", in: 1...Int.max).map(Int64.init)
            return try await offload { [index] in
                try JSON.response(["entries": try index.audit(limit: limit, before: before).map(AuditJSON.init)])
            }
        }
    }

    // MARK: users

    struct UserJSON: Encodable {
        var name: String, role: String, cameras: [String]?, created: String, passwordChanged: String
        /// A viewer may pan, tilt and zoom its cameras (admins always may).
        var ptz: Bool
        /// A viewer may talk through its cameras (admins always may).
        var talk: Bool
        init(_ u: UserRecord) {
            name = u.name
            role = u.role
            ptz = u.ptz
            talk = u.talk
            cameras = Accounts.identity(u, via: .unauthenticated).cameras?.sorted()
            created = Time90k.rfc3339(u.created90k)
            passwordChanged = Time90k.rfc3339(u.passwordChanged90k)
        }
    }

    struct AddUserBody: Decodable {
        var name: String
        var password: String
        var role: String
        var cameras: [String]?
        var ptz: Bool?
        var talk: Bool?
    }

    func addUser(_ r: Request, _ c: NVRContext) async throws -> Response {
        let who = try admin(c)
        let body = try await decode(AddUserBody.self, r, c)
        guard let role = Role(rawValue: body.role) else { throw APIError.badRequest("role must be admin or viewer") }
        let u = try await accessChange { [accounts] in
            try accounts.add(
                name: body.name, password: body.password, role: role, cameras: body.cameras, ptz: body.ptz ?? false,
                talk: body.talk ?? false)
        }
        audit.record(
            who.name, "user.add", target: u.name,
            detail: [
                "role": role.rawValue, "cameras": body.cameras?.joined(separator: ",") ?? "all",
                "ptz": String(u.ptz), "talk": String(u.talk),
            ],
            address: c.remoteAddress)
        return try JSON.response(UserJSON(u), status: .created)
    }

    struct ChangeUserBody: Decodable {
        var role: String?
        /// A list, or null for every camera.
        var cameras: Patch<[String]>?
        var password: String?
        var ptz: Bool?
        var talk: Bool?
        enum CodingKeys: String, CodingKey { case role, cameras, password, ptz, talk }
        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            role = try c.decodeIfPresent(String.self, forKey: .role)
            cameras = try c.patch(.cameras)
            password = try c.decodeIfPresent(String.self, forKey: .password)
            ptz = try c.decodeIfPresent(Bool.self, forKey: .ptz)
            talk = try c.decodeIfPresent(Bool.self, forKey: .talk)
        }
    }

    func changeUser(_ r: Request, _ c: NVRContext) async throws -> Response {
        let who = try admin(c)
        let name = c.parameters.get("name") ?? ""
        let body = try await decode(ChangeUserBody.self, r, c)
        let role = try body.role.map { r -> Role in
            guard let role = Role(rawValue: r) else { throw APIError.badRequest("role must be admin or viewer") }
            return role
        }
        let cameras: [String]?? = body.cameras.map { p -> [String]? in
            if case .value(let v) = p { return v } else { return nil }
        }
        let u = try await accessChange { [accounts] () throws -> UserRecord in
            if let password = body.password { try accounts.setPassword(name: name, password: password) }
            return try accounts.update(name: name, role: role, cameras: cameras, ptz: body.ptz, talk: body.talk)
        }
        var detail: [String: String] = [:]
        if let role { detail["role"] = role.rawValue }
        if let cameras { detail["cameras"] = cameras?.joined(separator: ",") ?? "all" }
        if body.password != nil { detail["password"] = "changed" }
        if let ptz = body.ptz { detail["ptz"] = String(ptz) }
        if let talk = body.talk { detail["talk"] = String(talk) }
        audit.record(who.name, "user.update", target: name, detail: detail, address: c.remoteAddress)
        return try JSON.response(UserJSON(u))
    }

    /// Runs an account change off the pool, turning AccessError into its status.
    func accessChange<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        do { return try await offload(body) } catch let e as AccessError { throw APIError.from(e) }
    }

    // MARK: tokens, sessions, audit

    struct TokenJSON: Encodable {
        var id: Int64, name: String, user: String, created: String, lastUsed: String?
        /// Only in the answer that creates it.
        var token: String?
        init(_ t: APITokenRecord, user: String, token: String? = nil) {
            id = t.id ?? 0
            name = t.name
            self.user = user
            created = Time90k.rfc3339(t.created90k)
            lastUsed = t.lastUsed90k.map(Time90k.rfc3339)
            self.token = token
        }
    }

    struct AddTokenBody: Decodable {
        var name: String
        var user: String?
    }

    /// POST /api/tokens {"name","user"}: an admin makes a token for any user (default: itself);
    /// the token is in this answer only.
    func addToken(_ r: Request, _ c: NVRContext) async throws -> Response {
        let who = try admin(c)
        let body = try await decode(AddTokenBody.self, r, c)
        let userName = body.user ?? who.name
        let (index, tokens) = (self.index, self.tokens)
        let made = try await accessChange { () throws -> (token: String, record: APITokenRecord) in
            guard let u = try index.user(named: userName) else {
                throw AccessError.notFound("no user named '\(userName.prefix(64))'")
            }
            return try tokens.create(for: u, name: body.name)
        }
        audit.record(who.name, "token.add", target: body.name, detail: ["user": userName], address: c.remoteAddress)
        return try JSON.response(TokenJSON(made.record, user: userName, token: made.token), status: .created)
    }

    struct SessionRowJSON: Encodable {
        var id: Int64, user: String, created: String, lastSeen: String, expires: String, address: String?,
            userAgent: String?, current: Bool
        init(_ s: SessionRecord, user: String, current: Bool) {
            id = s.id ?? 0
            self.user = user
            created = Time90k.rfc3339(s.created90k)
            lastSeen = Time90k.rfc3339(s.lastSeen90k)
            expires = Time90k.rfc3339(s.expires90k)
            address = s.address
            userAgent = s.userAgent
            self.current = current
        }
    }

    struct AuditJSON: Encodable {
        var id: Int64, time: String, time90k: Int64, user: String, action: String, target: String?, detail: JSONValue?,
            address: String?
        init(_ a: AuditRecord) {
            id = a.id ?? 0
            time = Time90k.rfc3339(a.time90k)
            time90k = a.time90k
            user = a.user
            action = a.action
            target = a.target
            detail = a.detail.flatMap { try? JSONValue(text: $0) }
            address = a.address
        }
    }
}
