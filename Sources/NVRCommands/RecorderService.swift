import Foundation
import Logging
import NVRCluster
import NVRMQTT
import NVRRecorder
import ServiceLifecycle

/// The recorder as a service of `nvr serve`'s `ServiceGroup`: it starts every camera once the
/// HTTP server listens (a port in use is refused before any camera records), and when the group
/// shuts down (SIGTERM, SIGINT, or the HTTP server failing) it stops them, each completing its
/// open segment. Start and stop block (recovery, joins), so they run on a thread of their own.
struct RecorderService: Service {
    let recorder: Recorder
    /// MQTT ([mqtt]): started before the cameras, stopped (saying `offline`) after them.
    let mqtt: MQTTBridge?
    /// With [cluster] node: the node's camera leases, kept from before the cameras start until
    /// after they stop (then given back, so other nodes take the cameras at once).
    let leases: NodeLeases?
    /// The node's advertised URL and storage id, for its row.
    let node: (advertiseURL: String?, storageID: String, certificatePEM: String?)?
    let addDemoIfEmpty: Bool
    /// Yields once the HTTP server listens.
    let listening: AsyncStream<Void>
    let logger: Logger
    /// The line logged once every camera has started.
    let started: String

    func run() async throws {
        var bound = false
        for await _ in listening {
            bound = true
            break
        }
        // The group ended first (the HTTP server could not listen), or a stop came before the
        // server listened: no camera starts only to be stopped.
        guard bound, !Task.isShuttingDownGracefully else { return }
        let recorder = self.recorder
        let addDemo = addDemoIfEmpty
        let mqtt = self.mqtt
        let leases = self.leases
        let node = self.node
        do {
            // MQTT first: it says "end" for the events recovery closes, and "new" for every
            // event the cameras start.
            try await Self.offload {
                try mqtt?.start()
                // Before leasing: a node's fence would refuse the journal's rows.
                try recorder.replayJournal()
                if let leases, let node {
                    try leases.attach(
                        recorder, advertiseURL: node.advertiseURL, storageID: node.storageID,
                        certificatePEM: node.certificatePEM)
                }
                try recorder.start(addDemoIfEmpty: addDemo)
                // After recovery: no camera starts while it looks at this node's rows.
                leases?.start()
            }
        } catch {
            try? await Self.offload {
                mqtt?.stop()
                recorder.stop()
                leases?.stop()
            }
            throw RecorderStartFailure(description: "\(error)")
        }
        logger.info("\(started)")
        // Until the group shuts down (or is cancelled: stop all the same).
        try? await gracefulShutdown()
        logger.info("nvr serve: stopping; completing open segments")
        try await Self.offload {
            // No camera taken or given up while stopping: given up, its lease could go to
            // another node while this one still records it.
            leases?.stopBalancing()
            recorder.stop()
            leases?.stop()
            mqtt?.stop()  // after: the events the cameras close get their "end"
        }
    }

    /// Blocking work on a Dispatch thread, not the concurrency pool's.
    static func offload(_ body: @escaping @Sendable () throws -> Void) async throws {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
            DispatchQueue.global().async { c.resume(with: Result { try body() }) }
        }
    }
}

/// The recorder could not start (recovery or the index failed).
struct RecorderStartFailure: Error, CustomStringConvertible {
    let description: String
}
