import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import NVRIndex
import NVRMedia
import NVRPlayback
import NVRPluginHost
import NVRRecorder
import NVRStorage
import ServiceLifecycle
import Synchronization

/// The HTTP server of `nvr serve` (Hummingbird 2), over HTTP or HTTPS: the JSON API,
/// view.mp4 and snapshots, all answered from the index and the segment files, for users who
/// have logged in (AccessMiddleware).
public final class HTTPServer: Sendable {
    public struct Options: Sendable {
        public var bind: String
        /// No login at all: every request acts as an admin (`--allow-unauthenticated`).
        public var allowUnauthenticated = false
        public var maxViewSeconds: Int
        /// PEM certificate chain and key: HTTPS instead of HTTP.
        public var tlsCert: String?
        public var tlsKey: String?
        public var allowedHosts: [String] = []
        public var sessionDays = 30
        public var pluginsDir: String?
        /// Request size limits, timeouts and the per-address connection cap.
        public var connectionLimits = ConnectionLimits()
        public init(bind: String, allowUnauthenticated: Bool = false, maxViewSeconds: Int = 86_400) {
            self.bind = bind
            self.allowUnauthenticated = allowUnauthenticated
            self.maxViewSeconds = maxViewSeconds
        }
        public var usesTLS: Bool { tlsCert != nil && tlsKey != nil }
    }

    let api: API
    let host: String
    let port: Int
    let logger: Logger
    let options: Options
    private let tls: TLSConfiguration?
    private let group = Mutex<ServiceGroup?>(nil)

    /// Checks the bind address and loads the TLS files. Plain HTTP beyond this machine is
    /// allowed (users must log in) but warned about: passwords would cross the network in clear.
    public init(index: any IndexStore, storage: StorageLayout, recorder: Recorder?, options: Options, logger: Logger)
        throws
    {
        let (host, port) = try Self.parseBind(options.bind)
        if options.allowUnauthenticated {
            logger.warning(
                "HTTP on \(options.bind) WITHOUT authentication: anyone who can reach it can watch and change every camera"
            )
        } else if !Self.isLoopback(host) && !options.usesTLS {
            logger.warning(
                "HTTP on \(options.bind) without TLS: passwords and video cross the network in clear (nvr tls self-signed makes a certificate)"
            )
        }
        if let cert = options.tlsCert, let key = options.tlsKey {
            do {
                let chain = try NIOSSLCertificate.fromPEMFile(cert).map { NIOSSLCertificateSource.certificate($0) }
                guard !chain.isEmpty else { throw ConfigError("no certificate in \(cert)") }
                tls = TLSConfiguration.makeServerConfiguration(
                    certificateChain: chain, privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
            } catch let e as ConfigError { throw e } catch {
                throw ConfigError("cannot load the TLS certificate \(cert) and key \(key): \(error)")
            }
        } else {
            tls = nil
        }
        self.host = host
        self.port = port
        self.logger = logger
        self.options = options
        let plugins = recorder?.plugins ?? PluginHost(directory: options.pluginsDir ?? PluginHost.executableDirectory)
        self.api = API(
            index: index, storage: storage, recorder: recorder, plugins: plugins,
            maxViewSeconds: options.maxViewSeconds,
            sessionDays: options.sessionDays, secureCookies: options.usesTLS,
            connectionLimits: options.connectionLimits,
            tlsCertificate: options.usesTLS ? options.tlsCert : nil)
    }

    /// Serves until `shutdown()`: requests in flight finish first. `onBound` gets the port
    /// (useful with port 0).
    public func run(onBound: @escaping @Sendable (Int) -> Void = { _ in }) async throws {
        let g = ServiceGroup(
            services: [try service(onBound: onBound)], gracefulShutdownSignals: [], cancellationSignals: [],
            logger: logger)
        group.withLock { $0 = g }
        try await g.run()
    }

    /// The server as a service for a `ServiceGroup` (`nvr serve` runs it beside the recorder's):
    /// it ends, after the requests in flight, when the group shuts down gracefully.
    public func service(onBound: @escaping @Sendable (Int) -> Void = { _ in }) throws -> any Service {
        // HEAD wherever GET (RFC 9110)
        let router = Router(context: NVRContext.self, options: .autoGenerateHeadEndpoints)
        let routes = DocumentedRoutes(openAPI: OpenAPIDocument.json)
        router.add(middleware: RequestMetricsMiddleware(metrics: api.metrics))
        router.add(middleware: JSONErrorMiddleware(routes: routes))
        router.add(
            middleware: AccessMiddleware(
                hosts: AllowedHosts(bindHost: host, extra: options.allowedHosts), routes: routes,
                sessions: api.sessions, tokens: api.tokens, required: !options.allowUnauthenticated))
        api.register(on: router)
        // WebSocket upgrades (live view) pass the same Host, login and method checks.
        let wsRouter = Router(context: NVRContext.self)
        wsRouter.add(middleware: RequestMetricsMiddleware(metrics: api.metrics))
        wsRouter.add(middleware: JSONErrorMiddleware(routes: routes))
        wsRouter.add(
            middleware: AccessMiddleware(
                hosts: AllowedHosts(bindHost: host, extra: options.allowedHosts), routes: routes,
                sessions: api.sessions, tokens: api.tokens, required: !options.allowUnauthenticated,
                nodeKey: api.nodeKey))
        api.registerLive(on: wsRouter)
        let limits = options.connectionLimits
        let decoder = HTTP1Channel.Configuration.DecoderConfiguration(
            maxHeaderFieldSize: limits.maxLine, maxHeaderListSize: limits.maxHeaderBytes,
            maxHeaderFieldCount: limits.maxHeaderCount)
        let channelConfiguration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(httpDecoderConfiguration: decoder),
            ws: .init(maxFrameSize: 1 << 16, autoPing: .enabled(timePeriod: .seconds(30))))
        let webSocketResponder = wsRouter.buildResponder()
        let (tls, registry) = (self.tls, api.connections)
        // Hummingbird's HTTP/1 + WebSocket channel, guarded (ConnectionGuard), under TLS if set.
        let server = HTTPServerBuilder { responder in
            let http = GuardedHTTPChannel(
                base: HTTP1WebSocketUpgradeChannel(
                    responder: responder, webSocketResponder: webSocketResponder,
                    configuration: channelConfiguration), registry: registry)
            guard let tls else { return http }
            return try TLSChannel(http, tlsConfiguration: tls)
        }
        let logger = self.logger
        let scheme = tls == nil ? "http" : "https"
        let onRunning: @Sendable (any Channel) async -> Void = { channel in
            let port = channel.localAddress?.port ?? 0
            logger.info("\(scheme.uppercased()) listening on \(channel.localAddress?.description ?? "?")")
            onBound(port)
        }
        let configuration = ApplicationConfiguration(address: .hostname(host, port: port), serverName: "nvr")
        let app = Application(
            router: router, server: server, configuration: configuration, onServerRunning: onRunning, logger: logger)
        return ListeningService(app: app, bind: options.bind)
    }

    /// The Hummingbird application, saying in words why it could not listen. A graceful shutdown
    /// lets the requests in flight finish for up to `drainSeconds`; then the rest (a long export
    /// to a slow client, a WebSocket peer that never answers the close) is cut.
    struct ListeningService: Service {
        let app: any Service
        let bind: String
        static let drainSeconds = 10

        func run() async throws {
            do {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await app.run() }
                    group.addTask {
                        // Cancelled (the server ended, or the group was cancelled): nothing to cut.
                        guard (try? await gracefulShutdown()) != nil else { return }
                        try await Task.sleep(for: .seconds(Self.drainSeconds))
                    }
                    try await group.next()
                    group.cancelAll()
                }
            } catch let e as IOError {
                // NIO says "bind(descriptor:ptr:bytes:): Address already in use (errno: 98)".
                let why = String(cString: strerror(e.errnoCode))
                throw ConfigError(
                    "cannot listen on \(bind): \(why)\(e.errnoCode == EADDRINUSE ? " (is another nvr serve running? change [http] bind)" : "")"
                )
            }
        }
    }

    public func shutdown() async {
        await group.withLock { $0 }?.triggerGracefulShutdown()
    }

    static func parseBind(_ bind: String) throws -> (String, Int) {
        var host = bind
        var portText = ""
        if bind.hasPrefix("["), let close = bind.firstIndex(of: "]") {  // [::1]:8080
            host = String(bind[bind.index(after: bind.startIndex)..<close])
            portText = String(bind[close...].dropFirst(2))
        } else if let colon = bind.lastIndex(of: ":") {
            host = String(bind[..<colon])
            portText = String(bind[bind.index(after: colon)...])
        }
        guard !host.isEmpty, let port = Int(portText), (0...65535).contains(port) else {
            throw ConfigError("http.bind '\(bind)' must look like 127.0.0.1:8080 or [::1]:8080")
        }
        return (host, port)
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}

/// The HTTP server's threads for blocking work (SQLite, file reads, decoding, bcrypt): a
/// bounded pool, so a flood of requests queues here instead of growing threads without end,
/// and the concurrency pool that serves every other request never blocks.
let blockingPool: NIOThreadPool = {
    let pool = NIOThreadPool(numberOfThreads: 16)
    pool.start()
    return pool
}()

/// Runs blocking work on `blockingPool`.
func offload<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await blockingPool.runIfActive(body)
}
