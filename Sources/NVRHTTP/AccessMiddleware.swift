import Foundation
import HTTPTypes
import Hummingbird
import NVRAccess

/// Who may ask what, checked before any route runs:
/// 1. `Host` must be one of the NVR's own names or addresses (DNS rebinding);
/// 2. the request is authenticated by its session cookie or an API token (Bearer), or is one
///    of the few public requests (login, health, the OpenAPI document, the page's files);
///    anything else is 401;
/// 3. a cookie-authenticated change (POST, PUT, PATCH, DELETE) must carry the session's CSRF
///    token in `X-CSRF-Token` (a form on another site cannot read it), else 403.
/// With authentication off (`--allow-unauthenticated`) every request acts as an admin; the
/// Host check still applies.
struct AccessMiddleware: RouterMiddleware {
    typealias Context = NVRContext
    let hosts: AllowedHosts
    /// A documented path asked with a method it does not have is 405 before any login check.
    let routes: DocumentedRoutes
    let sessions: SessionStore
    let tokens: TokenStore
    let required: Bool
    /// On a recorder node: the nodes' key, which another node presents (`X-NVR-Node-Key`) to
    /// relay a camera's live view (design/scale-out.md). nil elsewhere.
    var nodeKey: (@Sendable () throws -> String)? = nil

    static let nodeKeyHeader = HTTPField.Name("X-NVR-Node-Key")!

    static let cookieName = "nvr_session"
    static let csrfHeader = HTTPField.Name("X-CSRF-Token")!

    func handle(_ request: Request, context: NVRContext, next: (Request, NVRContext) async throws -> Response)
        async throws -> Response
    {
        guard hosts.allows(request.head.authority) else {
            throw APIError(
                .forbidden, "host_not_allowed",
                "this NVR does not answer to '\((request.head.authority ?? "").prefix(100))' (add it to http.allowed_hosts)"
            )
        }
        if let allowed = routes.allowed(path: request.uri.path), !allowed.contains(request.method.rawValue) {
            var e = APIError(
                .methodNotAllowed, "method_not_allowed",
                "\(request.uri.path) answers \(allowed.joined(separator: ", ")), not \(request.method)")
            e.headers[.allow] = allowed.joined(separator: ", ")
            throw e
        }
        var context = context
        guard required else {
            context.identity = .anonymousAdmin
            return try await next(request, context)
        }
        // A public request with a stale or unknown credential is answered as without one.
        let identity: Identity?
        do { identity = try await authenticate(request) } catch let e as APIError
            where Self.isPublic(request) && e.status == .unauthorized
        {
            identity = nil
        }
        if let identity {
            if case .session(_, let csrf) = identity.via, Self.changes(request.method), !Self.isLogin(request) {
                guard let sent = request.headers[Self.csrfHeader], Secrets.equal(sent, csrf) else {
                    throw APIError(
                        .forbidden, "csrf",
                        "a change made with a login cookie needs the X-CSRF-Token header (GET /api/session gives it)")
                }
            }
            context.identity = identity
            return try await next(request, context)
        }
        guard Self.isPublic(request) else {
            var e = APIError(
                .unauthorized, "unauthorized", "log in (POST /api/login) or send an API token (Authorization: Bearer …)"
            )
            e.headers[.wwwAuthenticate] = "Bearer realm=\"nvr\""
            throw e
        }
        return try await next(request, context)
    }

    /// The identity behind a Bearer token or the session cookie, or nil. A token or cookie that
    /// is sent but unknown is 401 at once (not treated as "no credentials").
    private func authenticate(_ request: Request) async throws -> Identity? {
        if let given = request.headers[Self.nodeKeyHeader], Self.isLive(request), let nodeKey {
            // Another node relaying a live view: it may watch any camera, and nothing else.
            let key = try await blocking { try nodeKey() }
            guard Secrets.equal(given, key) else { throw APIError(.unauthorized, "unauthorized", "not the nodes' key") }
            return Identity(userID: nil, name: "node", role: .viewer, cameras: nil, via: .node)
        }
        if let auth = request.headers[.authorization] {
            guard auth.lowercased().hasPrefix("bearer ") else {
                throw APIError(.unauthorized, "unauthorized", "only Bearer tokens are accepted in Authorization")
            }
            let token = String(auth.dropFirst(7)).trimmingCharacters(in: .whitespaces)
            guard let identity = try await blocking({ try tokens.identify(token: token) }) else {
                throw APIError(.unauthorized, "unauthorized", "unknown or removed API token")
            }
            return identity
        }
        guard let cookie = Self.cookie(request, Self.cookieName) else { return nil }
        guard let identity = try await blocking({ try sessions.identify(token: cookie) }) else {
            if Self.isPublic(request) { return nil }  // a stale cookie on the login page is no error
            var e = APIError(.unauthorized, "session_expired", "the session has ended: log in again")
            e.headers[.setCookie] = Self.clearCookie
            throw e
        }
        return identity
    }

    /// A camera's live view (`/api/cameras/{name}/live`).
    static func isLive(_ r: Request) -> Bool {
        // As the router reads a path: empty parts (a doubled or trailing slash) do not count.
        let parts = r.uri.path.split(separator: "/")
        return r.method == .get && parts.count == 4 && parts[0] == "api" && parts[1] == "cameras" && parts[3] == "live"
    }

    static func changes(_ m: HTTPRequest.Method) -> Bool { m == .post || m == .put || m == .patch || m == .delete }

    static func isLogin(_ r: Request) -> Bool { r.method == .post && r.uri.path == "/api/login" }

    /// Answered without a user: logging in, health probes, the API's description, the page,
    /// whether a recorder node reaches its index (other nodes ask during an outage), and a
    /// node's segment files for the other nodes (with the nodes' key instead of a user).
    static func isPublic(_ r: Request) -> Bool {
        let p = r.uri.path
        if isLogin(r) { return true }
        guard r.method == .get || r.method == .head else { return false }
        return p == "/api/health" || p == "/api/openapi.json" || p == "/api/node"
            || p.hasPrefix("/api/node/segments/")  // the route checks the nodes' key itself
            || (!p.hasPrefix("/api/") && p != "/metrics")
    }

    static func cookie(_ r: Request, _ name: String) -> String? {
        for header in r.headers[values: .cookie] {
            for part in header.split(separator: ";") {
                let kv = part.split(separator: "=", maxSplits: 1)
                if kv.count == 2, kv[0].trimmingCharacters(in: .whitespaces) == name {
                    return kv[1].trimmingCharacters(in: .whitespaces)
                }
            }
        }
        return nil
    }

    static func sessionCookie(_ token: String, maxAge: Int, secure: Bool) -> String {
        "\(cookieName)=\(token); Path=/; HttpOnly; SameSite=Strict; Max-Age=\(maxAge)" + (secure ? "; Secure" : "")
    }

    static let clearCookie = "\(cookieName)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"
}

/// Runs index work off the concurrency pool (see offload).
func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T { try await offload(body) }
