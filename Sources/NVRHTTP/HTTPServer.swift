import Foundation
import Hummingbird
import Logging
import NVRCore
import NVRIndex
import ServiceLifecycle
import Synchronization

/// The HTTP server of `nvr serve` (Hummingbird 2): the JSON API, view.mp4 and snapshots,
/// all answered from the index and the segment files.
public final class HTTPServer: Sendable {
    public struct Options: Sendable {
        public var bind: String
        public var allowUnauthenticated = false
        public var maxViewSeconds: Int
        public init(bind: String, allowUnauthenticated: Bool = false, maxViewSeconds: Int = 86_400) {
            self.bind = bind; self.allowUnauthenticated = allowUnauthenticated; self.maxViewSeconds = maxViewSeconds
        }
        public init(config: NVRConfig, allowUnauthenticated: Bool) {
            self.init(bind: config.httpBind, allowUnauthenticated: allowUnauthenticated, maxViewSeconds: config.maxViewSeconds)
        }
    }

    let api: API
    let host: String
    let port: Int
    let logger: Logger
    private let group = Mutex<ServiceGroup?>(nil)

    /// Checks the bind address: a non-loopback address needs `allowUnauthenticated` (there is no
    /// authentication yet) and gets a warning.
    public init(index: IndexDatabase, storage: StorageLayout, recorder: Recorder?, options: Options, logger: Logger) throws {
        let (host, port) = try Self.parseBind(options.bind)
        if !Self.isLoopback(host) {
            guard options.allowUnauthenticated else {
                throw ConfigError("http.bind \(options.bind) is reachable from other machines and there is no authentication yet; "
                                  + "bind 127.0.0.1 or pass --allow-unauthenticated")
            }
            logger.warning("HTTP on \(options.bind) WITHOUT authentication: anyone who can reach it can watch every camera")
        }
        self.host = host
        self.port = port
        self.logger = logger
        self.api = API(index: index, storage: storage, recorder: recorder, maxViewSeconds: options.maxViewSeconds)
    }

    /// Serves until `shutdown()`: requests in flight finish first. `onBound` gets the port
    /// (useful with port 0).
    public func run(onBound: @escaping @Sendable (Int) -> Void = { _ in }) async throws {
        let router = Router(options: .autoGenerateHeadEndpoints) // HEAD wherever GET (RFC 9110)
        router.add(middleware: JSONErrorMiddleware(routes: DocumentedRoutes(openAPI: OpenAPIDocument.json)))
        api.register(on: router)
        let logger = self.logger
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: "nvr"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                logger.info("HTTP listening on \(channel.localAddress?.description ?? "?")")
                onBound(port)
            },
            logger: logger)
        let g = ServiceGroup(services: [app], gracefulShutdownSignals: [], cancellationSignals: [], logger: logger)
        group.withLock { $0 = g }
        try await g.run()
    }

    public func shutdown() async {
        await group.withLock { $0 }?.triggerGracefulShutdown()
    }

    static func parseBind(_ bind: String) throws -> (String, Int) {
        var host = bind, portText = ""
        if bind.hasPrefix("["), let close = bind.firstIndex(of: "]") { // [::1]:8080
            host = String(bind[bind.index(after: bind.startIndex)..<close])
            portText = String(bind[close...].dropFirst(2))
        } else if let colon = bind.lastIndex(of: ":") {
            host = String(bind[..<colon]); portText = String(bind[bind.index(after: colon)...])
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

/// Runs blocking work (SQLite, file reads, decoding) on Dispatch threads, not on the
/// concurrency pool that serves every other request.
func offload<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { c in
        DispatchQueue.global().async { c.resume(with: Result { try body() }) }
    }
}
