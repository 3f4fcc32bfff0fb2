import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import TuyaAPI

/// Tuya's cloud OpenAPI as PROTOCOLS.md describes it, for the endpoints the camera plugin uses:
/// tokens (with expiry and refresh), stream allocation handing out single-use URLs, device
/// status and the cloud-storage timeline. Every request's signature is checked for real (a
/// wrong one answers 1004); an unknown or expired token answers 1010. Errors come as
/// `{"success":false,"code":N,"msg":…}` with HTTP 200, as the cloud sends them.
public final class TuyaCloudSimulator: @unchecked Sendable {
    // @unchecked Sendable: mutable state is guarded by `lock`.
    public struct Options: Sendable {
        public var httpPort = 0
        public var clientID = "4ghy8xkqw2n7vj3m5dpa"
        public var secret = "c7a9f1e35b2d48d6a0e4f9b1c3d5e7f9"
        public var uid = "ay1700000000000abcde"
        public var devices: Set<String> = ["bf12ab34cd56ef78gh90ij"]
        /// Seconds a token lives (the cloud says 7200).
        public var tokenSeconds = 7200
        public var logger = Logger(label: "camsim")
        public init() {}
    }

    public struct Stats: Sendable {
        public var tokens = 0, refreshes = 0, allocations = 0, badSigns = 0, expiredTokens = 0
        public var requests: [String: Int] = [:]
    }

    public let options: Options
    private let lock = NSLock()
    private var tokens: [String: Date] = [:]  // access token → expiry
    private var refreshTokens: Set<String> = []
    private var counters = Stats()
    private var group: ServiceGroup?
    /// Hands out the live URL for an allocation (a test points it at its RTSP server).
    private var allocator: @Sendable (String) -> String = { "rtsps://cloud.invalid/\($0)" }
    /// Cloud-storage recordings per device: (start, stop) unix seconds.
    private var recordings: [String: [(Int64, Int64)]] = [:]

    public init(_ options: Options = Options()) { self.options = options }

    public func setAllocator(_ f: @escaping @Sendable (String) -> String) { lock.withLock { allocator = f } }
    public func addCloudRecording(deviceID: String, start: Int64, stop: Int64) {
        lock.withLock { recordings[deviceID, default: []].append((start, stop)) }
    }
    /// Makes every token issued so far expire now (the next business call gets 1010).
    public func expireTokens() { lock.withLock { for k in tokens.keys { tokens[k] = .distantPast } } }
    public var stats: Stats { lock.withLock { counters } }

    public func run(onBound: @escaping @Sendable (Int) -> Void = { _ in }) async throws {
        let router = Router(context: SimContext.self)
        routes(router)
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: options.httpPort), serverName: "TuyaCloud"),
            onServerRunning: { ch in onBound(ch.localAddress?.port ?? 0) }, logger: options.logger)
        let g = ServiceGroup(
            services: [app], gracefulShutdownSignals: [], cancellationSignals: [], logger: options.logger)
        lock.withLock { group = g }
        try await g.run()
    }

    public func shutdown() async { await lock.withLock { group }?.triggerGracefulShutdown() }

    // MARK: HTTP

    private func answer(_ obj: [String: Any]) -> Response {
        var o = obj
        o["t"] = Int64(Date().timeIntervalSince1970 * 1000)
        let data =
            (try? JSONSerialization.data(withJSONObject: o, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return Response(
            status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    private func failure(_ code: Int, _ msg: String) -> Response {
        answer(["success": false, "code": code, "msg": msg])
    }
    private func success(_ result: Any) -> Response { answer(["success": true, "result": result]) }

    private func header(_ req: Request, _ name: String) -> String? {
        req.headers.first(where: { $0.name.canonicalName == name })?.value
    }

    /// Checks the signature (and, for business calls, the token); nil when the request may go on.
    private func refuse(_ req: Request, body: Data, business: Bool) -> Response? {
        let token = header(req, "access_token")
        guard header(req, "client_id") == options.clientID, let t = header(req, "t"), let sign = header(req, "sign")
        else {
            return failure(1004, "sign invalid")
        }
        let query = req.uri.queryParameters.map { (String($0.key), String($0.value)) }
        let url = TuyaSign.canonicalURL(path: req.uri.path, query: query)
        let expected = TuyaSign.sign(
            clientID: options.clientID, secret: options.secret, accessToken: business ? token : nil, t: t,
            nonce: header(req, "nonce") ?? "",
            stringToSign: TuyaSign.stringToSign(method: req.method.rawValue, body: body, url: url))
        guard sign == expected else {
            lock.withLock { counters.badSigns += 1 }
            return failure(1004, "sign invalid")
        }
        if business {
            let valid = lock.withLock { () -> Bool in
                guard let token, let expiry = tokens[token] else { return false }
                if expiry < Date() {
                    counters.expiredTokens += 1
                    return false
                }
                return true
            }
            guard valid else { return failure(1010, "token invalid") }
        }
        return nil
    }

    private func issueToken() -> [String: Any] {
        let access = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let refresh = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        lock.withLock {
            tokens[access] = Date(timeIntervalSinceNow: Double(options.tokenSeconds))
            refreshTokens.insert(refresh)
        }
        return [
            "access_token": access, "refresh_token": refresh, "expire_time": options.tokenSeconds, "uid": options.uid,
        ]
    }

    private func count(_ name: String) { lock.withLock { counters.requests[name, default: 0] += 1 } }

    private func routes(_ router: Router<SimContext>) {
        router.get("/v1.0/token") { [self] req, _ in
            count("token")
            if let r = refuse(req, body: Data(), business: false) { return r }
            guard req.uri.queryParameters.get("grant_type") == "1" else { return failure(1100, "param is illegal") }
            lock.withLock { counters.tokens += 1 }
            return success(issueToken())
        }
        router.get("/v1.0/token/:refresh") { [self] req, ctx in
            count("refresh")
            if let r = refuse(req, body: Data(), business: false) { return r }
            let refresh = ctx.parameters.get("refresh") ?? ""
            guard lock.withLock({ refreshTokens.remove(refresh) }) != nil else {
                return failure(1012, "refresh token invalid")
            }
            lock.withLock { counters.refreshes += 1 }
            return success(issueToken())
        }
        router.post("/v1.0/devices/:id/stream/actions/allocate") { [self] req, ctx in
            count("allocate")
            let body = Data(buffer: try await req.body.collect(upTo: 1 << 16))
            if let r = refuse(req, body: body, business: true) { return r }
            let id = ctx.parameters.get("id") ?? ""
            guard options.devices.contains(id) else { return failure(1106, "permission deny") }
            let type = ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any])?["type"] as? String ?? "rtsp"
            guard ["rtsp", "hls"].contains(type) else { return failure(1100, "param is illegal") }
            let url = lock.withLock {
                counters.allocations += 1
                return allocator
            }(id)
            return success(["url": url])
        }
        router.get("/v1.0/devices/:id/status") { [self] req, ctx in
            count("status")
            if let r = refuse(req, body: Data(), business: true) { return r }
            guard options.devices.contains(ctx.parameters.get("id") ?? "") else {
                return failure(1106, "permission deny")
            }
            return success([
                ["code": "sd_status", "value": 1], ["code": "sd_storge", "value": "62521344|30512128|32009216"],
                ["code": "battery_percentage", "value": 87], ["code": "record_switch", "value": true],
                ["code": "record_mode", "value": "2"], ["code": "motion_switch", "value": true],
            ])
        }
        router.get("/v1.0/users/:uid/devices/:id/storage/stream/hls") { [self] req, ctx in
            count("timeline")
            if let r = refuse(req, body: Data(), business: true) { return r }
            let id = ctx.parameters.get("id") ?? ""
            guard ctx.parameters.get("uid") == options.uid, options.devices.contains(id) else {
                return failure(1106, "permission deny")
            }
            guard let from = req.uri.queryParameters.get("time_g_t").flatMap({ Int64($0) }),
                let to = req.uri.queryParameters.get("time_l_t").flatMap({ Int64($0) }), from < to
            else {
                return failure(1100, "param is illegal")
            }
            let list = lock.withLock { recordings[id] ?? [] }.filter { $0.1 > from && $0.0 < to }.map {
                r -> [String: Any] in
                ["url": "https://cloud.invalid/\(id)/\(r.0).m3u8", "start_time": r.0, "stop_time": r.1]
            }
            return success(["list": list])
        }
    }
}
