import Foundation
import Logging
import NVRIndex
import NVRMedia

/// Runs the NVR's recording side: recovers the index, then records every enabled camera.
public final class Recorder: @unchecked Sendable {
    // @unchecked Sendable: `sessions` is guarded by `lock`; everything else is immutable.
    public let config: NVRConfig
    public let storage: StorageLayout
    public let index: IndexDatabase
    public let plugins: PluginHost
    private let logger: Logger
    private let lock = NSLock()
    private var sessions: [String: CameraSession] = [:]

    public init(config: NVRConfig, logger: Logger) throws {
        self.config = config
        self.logger = logger
        storage = StorageLayout(root: config.storageRoot)
        try storage.prepare()
        index = try IndexDatabase(path: storage.indexPath)
        plugins = PluginHost(directory: config.resolvedPluginsDir)
        MediaLog.configure(environment: ProcessInfo.processInfo.environment)
    }

    /// Recovers, adds the demo camera to an empty index, and starts every enabled camera.
    public func start(addDemoIfEmpty: Bool = true) throws {
        let report = try Recovery.run(index: index, storage: storage, logger: logger)
        if report.recovered + report.dropped + report.deletionsFinished > 0 {
            logger.notice("recovery: \(report.recovered) segments finished, \(report.dropped) dropped, \(report.deletionsFinished) deletions completed")
        }
        if addDemoIfEmpty, try index.cameras().isEmpty {
            try index.addCamera(CameraRecord(name: "demo", plugin: "demo", config: "{}", created90k: Time90k.now()))
            logger.notice("no cameras yet: added the synthetic 'demo' camera (remove it with: nvr camera remove demo)")
        }
        logger.info("storage \(storage.root), plugins from \(plugins.directory), segments of \(config.segmentSeconds) s")
        for camera in try index.cameras() where camera.enabled {
            startSession(camera)
        }
    }

    private func startSession(_ camera: CameraRecord) {
        let session = CameraSession(camera: camera, plugins: plugins, index: index, storage: storage,
                                    settings: Segmenter.Settings(segmentSeconds: config.segmentSeconds), logger: logger)
        lock.withLock { sessions[camera.name] = session }
        session.start()
    }

    public func session(named name: String) -> CameraSession? { lock.withLock { sessions[name] } }

    public var allSessions: [CameraSession] { lock.withLock { Array(sessions.values) } }

    /// Stops every camera; each completes its open segment first.
    public func stop() {
        let all = lock.withLock { () -> [CameraSession] in
            let s = Array(sessions.values); sessions.removeAll(); return s
        }
        DispatchQueue.concurrentPerform(iterations: all.count) { all[$0].stop() }
    }
}
