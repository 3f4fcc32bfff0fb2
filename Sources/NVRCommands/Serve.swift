import ArgumentParser
import Foundation
import Logging
import NVRAccess
import NVRCluster
import NVRHTTP
import NVRIndexPostgres
import NVRMQTT
import NVRPlayback
import NVRPluginHost
import NVRRecorder
import NVRStorage
import ServiceLifecycle
import Synchronization

/// `nvr serve`: records every enabled camera until SIGINT or SIGTERM.
struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Record every enabled camera and serve the HTTP API on [http] bind.")

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Do not add the demo camera when the index has no cameras.")
    var noDemo = false

    @Flag(help: "No login at all: anyone who reaches the HTTP port can watch and change everything (not recommended).")
    var allowUnauthenticated = false

    @Option(help: "Run as this recorder node, sharing the PostgreSQL index with other nodes ([cluster] node).")
    var node: String?

    func run() throws {
        let level = logLevelFromEnvironment()
        LoggingSystem.bootstrap { label in
            var h = StreamLogHandler.standardError(label: label)
            h.logLevel = level
            return h
        }
        let logger = makeLogger()
        var config = try global.load()
        if let node {
            guard NVRConfig.isNodeName(node) else {
                throw ValidationError("--node must be 1…64 letters, digits, '-' or '_'")
            }
            guard config.indexURL != nil else {
                throw CommandFailure("--node needs [index] url in the config: nodes share a PostgreSQL index")
            }
            config.clusterNode = node
        }
        // Without a single plugin no camera can record: say where they were looked for, once,
        // instead of retrying "plugin not found" forever.
        if PluginHost(directory: config.resolvedPluginsDir).discover().isEmpty {
            throw CommandFailure(
                "no plugins in \(config.resolvedPluginsDir) (\(config.pluginsDir == nil ? "beside the nvr executable" : "plugins.dir of \(config.source ?? "the config")")): no camera could record"
            )
        }
        try refuseRootInForeignRoot(StorageLayout(root: config.storageRoot))
        announceIfNew(StorageLayout(root: config.storageRoot), config: config)
        logger.info(
            "nvr \(NVRVersion.current): config \(config.source ?? "none (built-in defaults)"), storage \(StorageLayout(root: config.storageRoot).root), index \(config.indexDescription(StorageLayout(root: config.storageRoot)))"
        )
        let recorder: Recorder
        let http: HTTPServer
        do {
            recorder = try Recorder(config: config, logger: logger)
            try recorder.acquireLock()
            try (recorder.index as? PostgresIndex)?.holdServeLock()
            if !allowUnauthenticated, let first = try Accounts(index: recorder.index).bootstrapAdmin() {
                // Printed once, here: there is no default password.
                FileHandle.standardError.write(
                    Data(
                        """

                        ┌─ first start: created the user \(first.name) with the password  \(first.password)
                        │  log in at \(config.tlsCert == nil ? "http" : "https")://\(config.httpBind)/ (change it with: nvr user passwd \(first.name));
                        └─ for scripts: nvr token add --user \(first.name) --name scripts

                        """.utf8))
                AuditLog(index: recorder.index).record(
                    "nvr serve", "user.add", target: first.name, detail: ["role": "admin", "reason": "first start"])
            }
            http = try HTTPServer(
                index: recorder.index, storage: recorder.storage, recorder: recorder,
                options: .init(config: config, allowUnauthenticated: allowUnauthenticated), logger: logger)
        } catch {
            throw CommandFailure("cannot start: \(error)")
        }
        // The HTTP server and the recorder are one ServiceGroup. SIGINT and SIGTERM shut it down
        // gracefully, in reverse order: the recorder first (cameras complete their segments),
        // then the HTTP server (after the requests in flight). The recorder starts once the
        // server listens, so a port in use is refused before any camera records; an HTTP server
        // that fails cancels the group.
        let (listening, bound) = AsyncStream<Void>.makeStream()
        let group: ServiceGroup
        do {
            let server = try http.service(onBound: { _ in
                bound.yield()
                bound.finish()
            })
            // Without [mqtt], no broker state from an earlier run lingers on the page or in /api/health.
            if config.mqtt == nil { try? recorder.index.setSetting(MQTTBridge.statusKey, nil) }
            let mqtt = config.mqtt.map {
                MQTTBridge(
                    options: $0, index: recorder.index, recorder: recorder,
                    snapshots: Snapshots(index: recorder.index, storage: recorder.storage),
                    audit: AuditLog(index: recorder.index), logger: logger)
            }
            let leases = try config.clusterNode.map { name -> NodeLeases in
                guard let index = recorder.index as? PostgresIndex else {
                    throw CommandFailure("nodes need [index] url")
                }
                return NodeLeases(name: name, index: index, logger: logger)
            }
            let recording = RecorderService(
                recorder: recorder, mqtt: mqtt, leases: leases,
                node: try leases.map { _ in
                    (
                        config.advertiseURL, try NodeStorage.identity(root: recorder.storage.root),
                        // Published for the other nodes, which trust exactly this certificate.
                        try config.tlsCert.map { try PeerTrust.leafPEM(file: $0) }
                    )
                },
                addDemoIfEmpty: !noDemo && leases == nil, listening: listening, logger: logger,
                started:
                    "nvr serve: recording; API on \(config.tlsCert == nil ? "http" : "https")://\(config.httpBind)/api/cameras; stop with Ctrl-C"
            )
            group = ServiceGroup(
                configuration: .init(
                    services: [
                        .init(service: server),
                        .init(service: recording, failureTerminationBehavior: .gracefullyShutdownGroup),
                    ],
                    gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        } catch {
            throw CommandFailure("cannot start: \(error)")
        }
        // A parent may have started us with these blocked; stop must still work.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        sigaddset(&unblock, SIGINT)
        sigaddset(&unblock, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        let failure = Mutex<(any Error)?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            do { try await group.run() } catch { failure.withLock { $0 = error } }
            done.signal()
        }
        done.wait()
        switch failure.withLock({ $0 }) {
        case nil: break
        case let e as RecorderStartFailure: throw CommandFailure("cannot start: \(e)")
        case let e?: throw CommandFailure("HTTP server on \(config.httpBind) failed: \(e)")
        }
        logger.info("nvr serve: stopped")
    }
}
