import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Tuya's cloud OpenAPI (PROTOCOLS.md): signed requests, the access token (got, kept until
/// shortly before it expires, refreshed, and fetched again when the cloud says 1010), and the
/// calls the camera plugin needs. Blocking; call from a plugin thread. HTTPS through
/// URLSession (libcurl), so any host works, including a local simulator over plain HTTP.
public final class TuyaCloud: @unchecked Sendable {
    // @unchecked Sendable: the token is guarded by `lock`; the rest is immutable.
    public struct Config: Sendable {
        /// e.g. https://openapi.tuyaeu.com
        public var baseURL: String
        public var clientID: String
        public var secret: String
        public var timeout: Double = 10
        public init(baseURL: String, clientID: String, secret: String) {
            self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
            self.clientID = clientID
            self.secret = secret
        }
    }

    public struct Token: Sendable, Equatable {
        public var access: String
        public var refresh: String
        public var uid: String
        public var expires: Date
    }

    public let config: Config
    private let lock = NSLock()
    /// Held while getting or renewing the token, so concurrent first calls log in once.
    private let tokenLock = NSLock()
    private var token: Token?
    private var refreshes = 0

    public init(_ config: Config) { self.config = config }

    public var currentToken: Token? { lock.withLock { token } }
    /// Tokens obtained by refresh or re-login after the first (for status and tests).
    public var tokenRenewals: Int { lock.withLock { refreshes } }

    // MARK: calls

    /// A fresh single-use live URL (rtsp/rtsps or hls) for one connection.
    public func allocateStream(deviceID: String, type: String = "rtsp") throws -> String {
        let r = try call("POST", "/v1.0/devices/\(deviceID)/stream/actions/allocate", body: ["type": type])
        guard let url = (r as? [String: Any])?["url"] as? String, !url.isEmpty else {
            throw TuyaCloudError(code: nil, message: "stream allocation answered without a url")
        }
        return url
    }

    /// The device's status data points by code (sd_status, battery_percentage, …).
    public func deviceStatus(deviceID: String) throws -> [String: Any] {
        let r = try call("GET", "/v1.0/devices/\(deviceID)/status")
        var out: [String: Any] = [:]
        for item in r as? [[String: Any]] ?? [] {
            if let code = item["code"] as? String { out[code] = item["value"] }
        }
        return out
    }

    /// Cloud-storage recordings of a device in [from, to) (unix seconds).
    public func cloudTimeline(deviceID: String, from: Int64, to: Int64) throws -> [(
        url: String, start: Int64, stop: Int64
    )] {
        let uid = try ensureToken().uid
        let r = try call(
            "GET", "/v1.0/users/\(uid)/devices/\(deviceID)/storage/stream/hls",
            query: [("time_g_t", String(from)), ("time_l_t", String(to))])
        let list = (r as? [String: Any])?["list"] as? [[String: Any]] ?? []
        return list.compactMap { o in
            // Unix seconds from the cloud: a slice must lie between 1970 and 9999 and last under a day.
            guard let start = (o["start_time"] as? NSNumber)?.int64Value,
                let stop = (o["stop_time"] as? NSNumber)?.int64Value,
                start > 0, start < 253_402_300_800, stop > start, stop - start <= 86_400
            else { return nil }
            return (o["url"] as? String ?? "", start, stop)
        }
    }

    // MARK: requests

    /// A business call: the token is got or renewed as needed; a 1010 answer (token invalid or
    /// expired) renews it once and retries. Returns `result`.
    public func call(_ method: String, _ path: String, query: [(String, String)] = [], body: [String: Any]? = nil)
        throws -> Any
    {
        let token = try ensureToken()
        do {
            return try send(method, path, query: query, body: body, accessToken: token.access)
        } catch let e as TuyaCloudError where e.code == 1010 {
            let renewed = try renewToken(after: token)
            return try send(method, path, query: query, body: body, accessToken: renewed.access)
        }
    }

    /// The token, got on first use and refreshed a minute before it expires.
    @discardableResult
    public func ensureToken() throws -> Token {
        tokenLock.lock()
        defer { tokenLock.unlock() }
        if let t = currentToken, t.expires.timeIntervalSinceNow > 60 { return t }
        return try renewTokenLocked(after: currentToken)
    }

    /// Renews the token unless another call already did since `old` was read.
    private func renewToken(after old: Token?) throws -> Token {
        tokenLock.lock()
        defer { tokenLock.unlock() }
        if let t = currentToken, t != old, t.expires.timeIntervalSinceNow > 60 { return t }
        return try renewTokenLocked(after: old)
    }

    private func renewTokenLocked(after old: Token?) throws -> Token {
        var fresh: Token?
        if let old {
            // Refresh first; if the cloud refuses (refresh token gone too), log in again.
            fresh = try? parseToken(send("GET", "/v1.0/token/\(old.refresh)", accessToken: nil))
        }
        let t = try fresh ?? parseToken(send("GET", "/v1.0/token", query: [("grant_type", "1")], accessToken: nil))
        lock.withLock {
            if token != nil { refreshes += 1 }
            token = t
        }
        return t
    }

    private func parseToken(_ result: Any) throws -> Token {
        guard let o = result as? [String: Any], let access = o["access_token"] as? String,
            let refresh = o["refresh_token"] as? String
        else {
            throw TuyaCloudError(code: nil, message: "token answer lacks access_token or refresh_token")
        }
        let seconds = (o["expire_time"] as? NSNumber)?.doubleValue ?? 7200
        return Token(
            access: access, refresh: refresh, uid: o["uid"] as? String ?? "",
            expires: Date(timeIntervalSinceNow: seconds))
    }

    /// One signed request; `result` of a success, else a TuyaCloudError with the cloud's code.
    private func send(
        _ method: String, _ path: String, query: [(String, String)] = [], body: [String: Any]? = nil,
        accessToken: String?
    ) throws -> Any {
        let url = TuyaSign.canonicalURL(path: path, query: query)
        let data = try body.map { try JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]) } ?? Data()
        let t = String(Int64(Date().timeIntervalSince1970 * 1000))
        let nonce = UUID().uuidString.lowercased()
        let sign = TuyaSign.sign(
            clientID: config.clientID, secret: config.secret, accessToken: accessToken, t: t, nonce: nonce,
            stringToSign: TuyaSign.stringToSign(method: method, body: data, url: url))
        let encoded = url.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? url
        guard let u = URL(string: config.baseURL + encoded) else {
            throw TuyaCloudError(code: nil, message: "bad cloud URL \(config.baseURL + url)")
        }
        var r = URLRequest(url: u, timeoutInterval: config.timeout)
        r.httpMethod = method
        r.setValue(config.clientID, forHTTPHeaderField: "client_id")
        r.setValue(sign, forHTTPHeaderField: "sign")
        r.setValue(t, forHTTPHeaderField: "t")
        r.setValue(nonce, forHTTPHeaderField: "nonce")
        r.setValue("HMAC-SHA256", forHTTPHeaderField: "sign_method")
        if let accessToken { r.setValue(accessToken, forHTTPHeaderField: "access_token") }
        if body != nil {
            r.httpBody = data
            r.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (answer, status) = try Self.blocking(r)
        guard status == 200 else {
            throw TuyaCloudError(code: nil, message: "cloud answered HTTP \(status) to \(method) \(path)")
        }
        guard let o = try? JSONSerialization.jsonObject(with: answer) as? [String: Any] else {
            throw TuyaCloudError(
                code: nil,
                message:
                    "malformed JSON from \(method) \(path): '\(String(decoding: answer.prefix(80), as: UTF8.self))'")
        }
        guard o["success"] as? Bool == true else {
            let code = (o["code"] as? NSNumber)?.intValue
            throw TuyaCloudError(code: code, message: "\(method) \(path): \(o["msg"] as? String ?? "refused")")
        }
        return o["result"] ?? [:]
    }

    private static func blocking(_ request: URLRequest) throws -> (Data, Int) {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var out: (Data, Int)?
        nonisolated(unsafe) var failure: (any Error)?
        URLSession.shared.dataTask(with: request) { data, response, error in
            if let error {
                failure = error
            } else {
                out = (data ?? Data(), (response as? HTTPURLResponse)?.statusCode ?? 0)
            }
            done.signal()
        }.resume()
        done.wait()
        if let out { return out }
        throw TuyaCloudError(
            code: nil,
            message:
                "cloud unreachable at \(request.url?.host ?? "?"): \(failure.map { "\($0.localizedDescription)" } ?? "no answer")"
        )
    }
}

/// A cloud error: the cloud's code (1004 bad sign, 1010 token, 1106 permission…) and a hint.
public struct TuyaCloudError: Error, CustomStringConvertible, Sendable {
    public let code: Int?
    public let message: String
    public init(code: Int?, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String {
        guard let code else { return message }
        let hint: String =
            switch code {
            case 1004: "the cloud refused the signature: check client_id and secret"
            case 1010: "the access token is invalid or expired"
            case 1106: "permission denied: unknown device, or not linked to this cloud project"
            case 1100, 1101: "a parameter is wrong"
            case 2001: "the device is offline"
            default: "cloud error"
            }
        return "\(message) (code \(code): \(hint))"
    }
}
