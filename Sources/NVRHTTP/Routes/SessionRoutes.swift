import Foundation
import HTTPTypes
import Hummingbird
import NVRAccess
import NVRCameras
import NVRIndex
import NVRMQTT
import NVRRecorder
import NVRTime

/// Logging in and out, who is logged in, one's own password, and health.
struct SessionRoutes: IndexedRoutes {
    let index: any IndexStore
    let recorder: Recorder?
    let accounts: Accounts
    let sessions: SessionStore
    let throttle: LoginThrottle
    let audit: AuditLog
    /// Cookies carry Secure (the server speaks HTTPS).
    let secureCookies: Bool

    func register(on router: Router<NVRContext>) {
        router.post("/api/login") { r, c in try await login(r, c) }
        router.post("/api/logout") { _, c in
            if case .session(let id, _)? = c.identity?.via {
                try await offload { [sessions] in try sessions.revoke(id: id) }
                audit.record(c.identity?.name ?? "?", "logout", address: c.remoteAddress)
            }
            return Response(
                status: .noContent, headers: [.setCookie: AccessMiddleware.clearCookie, .cacheControl: "no-store"])
        }
        router.get("/api/session") { _, c in try JSON.response(SessionJSON(try identity(c))) }
        router.put("/api/session/password") { r, c in try await changeOwnPassword(r, c) }
        router.get("/api/health") { _, c in try await health(c) }
    }

    struct LoginBody: Decodable {
        var user: String
        var password: String
    }

    /// Who is logged in, what they may do, and (for a cookie session) the CSRF token changes need.
    struct SessionJSON: Encodable {
        var user: String, role: String, cameras: [String]?
        /// May pan, tilt and zoom the cameras it sees (every admin; viewers given it).
        var ptz: Bool
        /// May talk through the cameras it sees.
        var talk: Bool
        /// "session" (cookie), "token" (Bearer), or "none" (the server asks for no login).
        var via: String
        var csrf: String?
        init(_ who: Identity) {
            user = who.name
            role = who.role.rawValue
            cameras = who.cameras?.sorted()
            ptz = who.isAdmin || who.ptz
            talk = who.isAdmin || who.talk
            switch who.via {
            case .session(_, let csrf):
                via = "session"
                self.csrf = csrf
            case .token: via = "token"
            case .unauthenticated: via = "none"
            case .node: via = "node"
            }
        }
    }

    /// POST /api/login {"user","password"}: a session cookie (HttpOnly, SameSite=Strict,
    /// Secure under HTTPS). Failed tries are slowed down per user and per address (429).
    func login(_ r: Request, _ c: NVRContext) async throws -> Response {
        let body = try await decode(LoginBody.self, r, c)
        let address = c.remoteAddress
        let wait = throttle.wait(user: body.user, address: address)
        if wait > 0 {
            var e = APIError(
                .tooManyRequests, "too_many_attempts",
                "too many failed logins: try again in \(Int(wait.rounded(.up))) s")
            e.headers[.retryAfter] = String(Int(wait.rounded(.up)))
            throw e
        }
        let userAgent = r.headers[.userAgent]
        let (accounts, sessions) = (self.accounts, self.sessions)
        guard let user = try await offload({ try accounts.verify(name: body.user, password: body.password) }) else {
            throttle.failed(user: body.user, address: address)
            audit.record(String(body.user.prefix(64)), "login.failed", address: address)
            throw APIError(.unauthorized, "bad_credentials", "wrong user name or password")
        }
        throttle.succeeded(user: body.user, address: address)
        let made = try await offload { try sessions.create(user: user, address: address, userAgent: userAgent) }
        audit.record(user.name, "login", address: address)
        let who = Accounts.identity(user, via: .session(id: made.session.id ?? 0, csrf: made.csrf))
        var response = try JSON.response(SessionJSON(who))
        response.headers[.setCookie] = AccessMiddleware.sessionCookie(
            made.token, maxAge: Int(sessions.lifetime90k / 90_000), secure: secureCookies)
        return response
    }

    struct PasswordBody: Decodable {
        var current: String
        var new: String
    }

    /// PUT /api/session/password {"current","new"}: a user changes their own password; every
    /// session of theirs ends and this browser gets a new one.
    func changeOwnPassword(_ r: Request, _ c: NVRContext) async throws -> Response {
        let who = try identity(c)
        let body = try await decode(PasswordBody.self, r, c)
        let (accounts, sessions) = (self.accounts, self.sessions)
        guard who.userID != nil,
            let user = try await offload({ try accounts.verify(name: who.name, password: body.current) })
        else {
            throw APIError(.forbidden, "bad_credentials", "the current password is wrong")
        }
        do { try await offload { try accounts.setPassword(name: user.name, password: body.new) } } catch let e
            as AccessError
        { throw APIError.from(e) }
        audit.record(who.name, "user.password", target: who.name, address: c.remoteAddress)
        guard case .session = who.via, let fresh = try await offload({ try accounts.index.user(named: user.name) })
        else {
            return Response(status: .noContent)
        }
        let made = try await offload {
            try sessions.create(user: fresh, address: c.remoteAddress, userAgent: r.headers[.userAgent])
        }
        var response = try JSON.response(
            SessionJSON(Accounts.identity(fresh, via: .session(id: made.session.id ?? 0, csrf: made.csrf))))
        response.headers[.setCookie] = AccessMiddleware.sessionCookie(
            made.token, maxAge: Int(sessions.lifetime90k / 90_000), secure: secureCookies)
        return response
    }

    struct HealthJSON: Encodable {
        struct Camera: Encodable {
            var name: String
            var state: String
            var since: String?
            var reason: String?
            var healthy: Bool
        }
        var status: String
        var cameras: Int
        var unhealthy: Int
        /// Per camera, for a logged-in user.
        var details: [Camera]?
        /// The MQTT broker ([mqtt]), for a logged-in user: connected, or why not.
        var mqtt: MQTT?
        struct MQTT: Encodable {
            var state: String
            var reason: String?
            var since: String
            var broker: String
        }
    }

    /// GET /api/health: 200 while every enabled camera streams (or reconnects within 90 s of
    /// losing its stream), else 503 — for probes and monitors. Without a login it gives counts
    /// only, never camera names.
    func health(_ c: NVRContext) async throws -> Response {
        let now = Time90k.now()
        let details = try await offload { [index, recorder] in
            try index.cameras().filter(\.enabled).map { cam -> HealthJSON.Camera in
                let o = try CameraOverview.load(cam, index: index, recorder: recorder)
                let state = o.state ?? "stopped"
                let recent = o.since90k.map { now - $0 < 90 * 90_000 } ?? false
                let healthy =
                    state == "streaming" || (recorder != nil && state != "failed" && state != "stopped" && recent)
                return .init(
                    name: cam.name, state: state, since: o.since90k.map(Time90k.rfc3339), reason: o.reason,
                    healthy: healthy)
            }
        }
        let who = c.identity
        let visible = who.map { w in details.filter { w.mayView(camera: $0.name) } }
        let bad = details.filter { !$0.healthy }.count
        // The bridge's state as `nvr serve` saved it; only while a server runs here.
        let mqtt = try await offload { [index, recorder] in recorder == nil ? nil : MQTTSavedStatus.load(from: index) }
        let out = HealthJSON(
            status: bad == 0 ? "ok" : "degraded", cameras: details.count, unhealthy: bad, details: visible,
            mqtt: who == nil
                ? nil
                : mqtt.map {
                    .init(state: $0.state, reason: $0.reason, since: Time90k.rfc3339($0.since90k), broker: $0.broker)
                })
        return try JSON.response(out, status: bad == 0 ? .ok : .serviceUnavailable)
    }
}
