import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// A GoPro (HERO12 by default) as PROTOCOLS.md describes it: the Open GoPro HTTP endpoints an
/// NVR uses, with the documented JSON (media values as strings), the preview stream as
/// MPEG-TS over UDP to whoever started it, the SD card's files with Range, and switches a
/// test (or a person, through /sim/…) flips: Wi-Fi loss, a stalled stream, busy, failures.
public final class GoProSimulator: @unchecked Sendable {
    // @unchecked Sendable: mutable state is guarded by `lock`; the card and relay are thread-safe.
    public struct Options: Sendable {
        public var httpPort = 8080
        /// The address the HTTP API listens on (a test network's camera address, 10.5.5.9 for its access point).
        public var httpAddress = "127.0.0.1"
        public var cardRoot: String
        /// Record to the card from the start (the card then keeps recording through Wi-Fi loss).
        public var recordToCard = true
        public var chapterSeconds = 15
        /// Camera clock minus UTC in seconds: its time zone plus drift.
        public var clockOffset: Double = 3600
        public var zoneMinutes = 60
        public var width = 640, height = 360, fps = 30
        /// The preview stream's size, when it differs from the card's (a real GoPro's always does).
        public var previewWidth: Int?, previewHeight: Int?
        /// HERO9–11 reject the preview's port parameter.
        public var acceptsPortParameter = true
        /// Seconds without a keep-alive after which the camera stops streaming.
        public var keepAliveTimeout: Double = 10
        public var logger = Logger(label: "camsim")
        public init(cardRoot: String) { self.cardRoot = cardRoot }
    }

    /// A canned bad answer for the next `count` requests to a path.
    public enum Failure: Sendable {
        case status(Int)
        case malformedJSON
    }

    public struct Stats: Sendable {
        public var keepAlives = 0
        public var streamStarts = 0
        public var streamStops = 0
        public var cardBytesServed: Int64 = 0
        public var requests: [String: Int] = [:]
    }

    public let options: Options
    let card: GoProCard
    private let relay: UDPRelay
    private let lock = NSLock()
    private var wifiUp = true
    private var stalledUntil = Date.distantPast
    private var busyUntil = Date.distantPast
    private var streaming = false
    private var lastKeepAlive = Date.distantPast
    private var failures: [String: (Failure, Int)] = [:]
    private var counters = Stats()
    private var group: ServiceGroup?

    public init(_ options: Options) throws {
        self.options = options
        card = try GoProCard(
            root: options.cardRoot, clockOffset: options.clockOffset, chapterSeconds: options.chapterSeconds,
            width: options.width, height: options.height, fps: options.fps,
            previewSize: options.previewWidth.flatMap { w in options.previewHeight.map { (w, $0) } })
        relay = try UDPRelay()
    }

    // MARK: switches

    /// The camera's Wi-Fi: down = no HTTP answers and no stream; the card keeps recording.
    public func setWiFi(up: Bool) {
        lock.withLock { wifiUp = up }
        updateRelay()
    }

    /// Stops the stream's packets for `seconds` without anything else changing.
    public func stallStream(seconds: Double) {
        lock.withLock { stalledUntil = Date(timeIntervalSinceNow: seconds) }
        updateRelay()
    }

    public func setBusy(seconds: Double) { lock.withLock { busyUntil = Date(timeIntervalSinceNow: seconds) } }

    public func fail(_ path: String, with failure: Failure, count: Int) {
        lock.withLock { failures[path] = (failure, count) }
    }

    public var stats: Stats {
        lock.withLock { counters }
    }

    public var isStreaming: Bool { lock.withLock { streaming } }

    /// Forwards stream packets only while Wi-Fi is up, the stream is on, not stalled, and kept alive.
    private func updateRelay() {
        let on = lock.withLock {
            wifiUp && streaming && Date() >= stalledUntil
                && Date().timeIntervalSince(lastKeepAlive) < options.keepAliveTimeout
        }
        relay.forwarding = on
    }

    // MARK: running

    /// Starts the encoder and serves HTTP until `shutdown()`; `onBound` gets the HTTP port.
    public func run(onBound: @escaping @Sendable (Int) -> Void = { _ in }) async throws {
        try card.startEncoder(udpPort: relay.port, toCard: options.recordToCard, recording: 1)
        let watcher = Task.detached { [self] in
            while !Task.isCancelled {
                if let first = relay.firstDatagram { card.anchor(firstFrame: first) }
                updateRelay()  // stall ends, keep-alive timeout
                try? await Task.sleep(nanoseconds: 200_000_000)
            }
        }
        defer {
            watcher.cancel()
            card.stopEncoder()
            relay.stop()
        }
        let router = Router(context: SimContext.self)
        routes(router)
        let logger = options.logger
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(options.httpAddress, port: options.httpPort), serverName: "GoPro"),
            onServerRunning: { ch in
                logger.info("camsim gopro: HTTP on \(ch.localAddress?.description ?? "?"), card \(self.card.folder)")
                onBound(ch.localAddress?.port ?? 0)
            }, logger: logger)
        let g = ServiceGroup(services: [app], gracefulShutdownSignals: [], cancellationSignals: [], logger: logger)
        lock.withLock { group = g }
        try await g.run()
    }

    /// Stops the encoder (the card stops recording, the stream ends) at once.
    public func stopEncoder() { card.stopEncoder() }

    /// Names of the complete files the card lists.
    public var cardFiles: [String] { card.files().map(\.name) }

    /// The card folder (DCIM/100GOPRO) where real MP4s can be dropped.
    public var cardFolder: String { card.folder }

    public func shutdown() async {
        await lock.withLock { group }?.triggerGracefulShutdown()
        card.stopEncoder()
    }

    // MARK: HTTP

    private func json(_ obj: Any, status: HTTPResponse.Status = .ok) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: obj, options: [.sortedKeys])) ?? Data("{}".utf8)
        return Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// Registers a camera endpoint: no answer while Wi-Fi is down, canned failures first.
    private func endpoint(
        _ router: Router<SimContext>, _ path: RouterPath, _ name: String,
        _ body: @escaping @Sendable (Request, SimContext) async throws -> Response
    ) {
        router.get(path) { [self] req, ctx in
            let (up, failure) = lock.withLock { () -> (Bool, Failure?) in
                counters.requests[name, default: 0] += 1
                guard wifiUp else { return (false, nil) }
                guard let (f, n) = failures[name], n > 0 else { return (true, nil) }
                failures[name] = n > 1 ? (f, n - 1) : nil
                return (true, f)
            }
            if !up {
                // Out of radio range: the request never gets an answer.
                try await Task.sleep(nanoseconds: 30_000_000_000)
                return Response(status: .serviceUnavailable)
            }
            switch failure {
            case .status(let code)?:
                return json(["error": code, "message": "simulated failure"], status: HTTPResponse.Status(code: code))
            case .malformedJSON?:
                return Response(
                    status: .ok, headers: [.contentType: "application/json"],
                    body: .init(byteBuffer: ByteBuffer(string: "{\"status\": {\"1\": 1,")))
            case nil:
                return try await body(req, ctx)
            }
        }
    }

    private func routes(_ router: Router<SimContext>) {
        endpoint(router, "/gopro/version", "version") { [self] _, _ in json(["version": "2.0"]) }
        endpoint(router, "/gopro/camera/keep_alive", "keep_alive") { [self] _, _ in
            lock.withLock {
                counters.keepAlives += 1
                lastKeepAlive = Date()
            }
            updateRelay()
            return json([:])
        }
        endpoint(router, "/gopro/camera/control/set_ui_controller", "set_ui_controller") { [self] _, _ in json([:]) }
        endpoint(router, "/gopro/camera/control/wired_usb", "wired_usb") { [self] _, _ in json([:]) }
        endpoint(router, "/gopro/camera/info", "info") { [self] _, _ in
            json([
                "model_name": "HERO12 Black", "model_number": "62", "firmware_version": "H23.01.02.32.00",
                "serial_number": "C3501324500789", "ap_ssid": "GP24500789", "ap_mac_addr": "2674f7f66104",
            ])
        }
        endpoint(router, "/gopro/camera/state", "state") { [self] _, _ in json(stateDocument()) }
        endpoint(router, "/gopro/camera/get_date_time", "get_date_time") { [self] _, _ in
            let local = Date(timeIntervalSince1970: card.localNow().rounded(.down))
            let f = DateFormatter()
            f.timeZone = TimeZone(identifier: "UTC")
            f.dateFormat = "yyyy_MM_dd"
            let date = f.string(from: local)
            f.dateFormat = "HH_mm_ss"
            return json(["date": date, "time": f.string(from: local), "tzone": options.zoneMinutes, "dst": 0])
        }
        endpoint(router, "/gopro/camera/stream/start", "stream_start") { [self] req, ctx in
            if let p = req.uri.queryParameters.get("port"), !options.acceptsPortParameter {
                _ = p
                return json(["error": "port not supported on this model"], status: .badRequest)
            }
            if lock.withLock({ Date() < busyUntil }) { return json(["error": "busy"], status: .conflict) }
            let port = req.uri.queryParameters.get("port").flatMap(Int.init) ?? 8554
            let peer = ctx.remoteAddress?.ipAddress ?? "127.0.0.1"
            relay.send(to: peer, port: port)
            lock.withLock {
                streaming = true
                counters.streamStarts += 1
                if Date().timeIntervalSince(lastKeepAlive) > 1 { lastKeepAlive = Date() }
            }
            updateRelay()
            return json([:])
        }
        endpoint(router, "/gopro/camera/stream/stop", "stream_stop") { [self] _, _ in
            lock.withLock {
                streaming = false
                counters.streamStops += 1
            }
            updateRelay()
            return json([:])
        }
        endpoint(router, "/gopro/media/list", "media_list") { [self] _, _ in
            let fs = card.files().map { f -> [String: Any] in
                [
                    "n": f.name, "cre": String(f.created), "mod": String(f.created + Int64(f.duration.rounded())),
                    "s": String(f.size),
                    "glrv": String(f.size / 10), "ls": "-1",
                ]
            }
            return json(["id": "2530266050123724003", "media": [["d": card.directory, "fs": fs]]])
        }
        endpoint(router, "/gopro/media/info", "media_info") { [self] req, _ in
            guard let path = req.uri.queryParameters.get("path"), let f = card.files().first(where: { $0.path == path })
            else {
                return json(["error": "no such file"], status: .notFound)
            }
            // Every value a string, as the camera sends them.
            let info: [String: String] = [
                "cre": String(f.created), "s": String(f.size), "dur": String(Int64(f.duration.rounded())),
                "w": String(f.width), "h": String(f.height),
                "fps": String(f.fps), "fps_denom": "1", "ao": "off", "profile": "42", "avc_profile": "100", "ct": "0",
                "gumi": "5e7cf0e2a1b34c1e8f3a9d62b1c4e7a0",
                "hc": "0", "eis": "0", "mp": "1", "rot": "0", "tr": "0", "us": "0", "cl": "0", "ls": "-1", "pta": "0",
                "subsample": "0",
            ]
            return json(info)
        }
        endpoint(router, "/videos/DCIM/:directory/:file", "download") { [self] req, ctx in
            let dir = ctx.parameters.get("directory") ?? ""
            let file = ctx.parameters.get("file") ?? ""
            guard dir == card.directory, !file.contains("/"), !file.hasPrefix("."),
                card.files().contains(where: { $0.name == file })
            else { return Response(status: .notFound) }
            return try rangeFileResponse(card.folder + "/" + file, range: req.headers[.range]) { [self] n in
                lock.withLock { counters.cardBytesServed += Int64(n) }
            }
        }
        router.get("/sim/wifi") { [self] req, _ in
            setWiFi(up: req.uri.queryParameters.get("up") != "0")
            return json(["wifi": lock.withLock { wifiUp }])
        }
        router.get("/sim/stall") { [self] req, _ in
            stallStream(seconds: req.uri.queryParameters.get("seconds").flatMap(Double.init) ?? 5)
            return json([:])
        }
        router.get("/sim/busy") { [self] req, _ in
            setBusy(seconds: req.uri.queryParameters.get("seconds").flatMap(Double.init) ?? 5)
            return json([:])
        }
        router.get("/sim/stats") { [self] _, _ in
            let s = stats
            return json([
                "keep_alives": s.keepAlives, "stream_starts": s.streamStarts, "card_bytes_served": s.cardBytesServed,
                "streaming": isStreaming, "datagrams_sent": relay.datagramsSent, "requests": s.requests,
            ])
        }
    }

    /// The camera state document: statuses as integers, as /gopro/camera/state sends them.
    func stateDocument() -> [String: Any] {
        let (busy, streaming) = lock.withLock { (Date() < busyUntil, self.streaming) }
        let recording = card.isRecording && options.recordToCard
        let status: [String: Int] = [
            "1": 1, "2": 3, "70": 87, "6": 0, "8": busy ? 1 : 0, "10": recording ? 1 : 0, "13": recording ? 42 : 0,
            "32": streaming ? 1 : 0, "55": 1, "33": 0, "35": 231, "54": 30_512_128, "117": 62_521_344, "60": 500,
        ]
        return ["status": status, "settings": ["2": 9, "3": 8, "121": 4]]
    }
}

/// Request context that knows the client's address: the stream goes to whoever started it.
struct SimContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?
    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
