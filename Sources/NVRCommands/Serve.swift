import ArgumentParser
import Foundation
import Logging
import NVRCore

/// `nvr serve`: records every enabled camera until SIGINT or SIGTERM.
struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Record every enabled camera (and, later, serve HTTP).")

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Do not add the demo camera when the index has no cameras.")
    var noDemo = false

    func run() throws {
        let level = logLevelFromEnvironment()
        LoggingSystem.bootstrap { label in
            var h = StreamLogHandler.standardError(label: label)
            h.logLevel = level
            return h
        }
        let logger = makeLogger()
        let config = try global.load()
        let recorder: Recorder
        do {
            recorder = try Recorder(config: config, logger: logger)
            try recorder.start(addDemoIfEmpty: !noDemo)
        } catch {
            throw CommandFailure("cannot start: \(error)")
        }
        logger.info("nvr serve: recording; stop with Ctrl-C")
        let stop = DispatchSemaphore(value: 0)
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
        recorder.stop()
        logger.info("nvr serve: stopped")
        _ = sources
    }
}
