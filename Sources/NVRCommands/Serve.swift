import ArgumentParser
import Foundation
import Synchronization
import Logging
import NVRAccess
import NVRCore
import NVRHTTP
import NVRPlayback

/// `nvr serve`: records every enabled camera until SIGINT or SIGTERM.
struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Record every enabled camera and serve the HTTP API on [http] bind.")

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Do not add the demo camera when the index has no cameras.")
    var noDemo = false

    @Flag(help: "No login at all: anyone who reaches the HTTP port can watch and change everything (not recommended).")
    var allowUnauthenticated = false

    func run() throws {
        let level = logLevelFromEnvironment()
        LoggingSystem.bootstrap { label in
            var h = StreamLogHandler.standardError(label: label)
            h.logLevel = level
            return h
        }
        let logger = makeLogger()
        let config = try global.load()
        // Without a single plugin no camera can record: say where they were looked for, once,
        // instead of retrying "plugin not found" forever.
        if PluginHost(directory: config.resolvedPluginsDir).discover().isEmpty {
            throw CommandFailure("no plugins in \(config.resolvedPluginsDir) (\(config.pluginsDir == nil ? "beside the nvr executable" : "plugins.dir of \(config.source ?? "the config")")): no camera could record")
        }
        try refuseRootInForeignRoot(StorageLayout(root: config.storageRoot))
        announceIfNew(StorageLayout(root: config.storageRoot), config: config)
        logger.info("nvr \(NVRVersion.current): config \(config.source ?? "none (built-in defaults)"), storage \(StorageLayout(root: config.storageRoot).root)")
        let recorder: Recorder
        let http: HTTPServer
        do {
            recorder = try Recorder(config: config, logger: logger)
            try recorder.acquireLock()
            if !allowUnauthenticated, let first = try Accounts(index: recorder.index).bootstrapAdmin() {
                // Printed once, here: there is no default password.
                FileHandle.standardError.write(Data("""

                    ┌─ first start: created the user \(first.name) with the password  \(first.password)
                    │  log in at \(config.tlsCert == nil ? "http" : "https")://\(config.httpBind)/ (change it with: nvr user passwd \(first.name));
                    └─ for scripts: nvr token add --user \(first.name) --name scripts

                    """.utf8))
                AuditLog(index: recorder.index).record("nvr serve", "user.add", target: first.name, detail: ["role": "admin", "reason": "first start"])
            }
            http = try HTTPServer(index: recorder.index, storage: recorder.storage, recorder: recorder,
                                  options: .init(config: config, allowUnauthenticated: allowUnauthenticated), logger: logger)
        } catch {
            throw CommandFailure("cannot start: \(error)")
        }
        let stop = DispatchSemaphore(value: 0)
        // The server runs on Swift concurrency; this thread waits for a signal or its failure.
        let bound = DispatchSemaphore(value: 0)
        let failure = Mutex<String?>(nil)
        let served = DispatchSemaphore(value: 0)
        Task {
            do { try await http.run { _ in bound.signal() } } catch {
                failure.withLock { $0 = "HTTP server on \(config.httpBind) failed: \(error)" }
                bound.signal()
                stop.signal()
            }
            served.signal()
        }
        // Listen first: a port in use is refused before any camera starts recording.
        bound.wait()
        if let message = failure.withLock({ $0 }) { throw CommandFailure(message) }
        do { try recorder.start(addDemoIfEmpty: !noDemo) } catch {
            Task { await http.shutdown() }
            _ = served.wait(timeout: .now() + 10)
            throw CommandFailure("cannot start: \(error)")
        }
        logger.info("nvr serve: recording; API on \(config.tlsCert == nil ? "http" : "https")://\(config.httpBind)/api/cameras; stop with Ctrl-C")
        // A parent may have started us with these blocked; stop must still work.
        var unblock = sigset_t()
        sigemptyset(&unblock); sigaddset(&unblock, SIGINT); sigaddset(&unblock, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        var sources: [any DispatchSourceSignal] = []
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            s.setEventHandler { stop.signal() }
            s.resume()
            sources.append(s)
        }
        stop.wait()
        logger.info("nvr serve: stopping; completing open segments")
        Task { await http.shutdown() }
        recorder.stop()
        _ = served.wait(timeout: .now() + 10)
        if let message = failure.withLock({ $0 }) { throw CommandFailure(message) }
        logger.info("nvr serve: stopped")
        _ = sources
    }
}
