import CamSim
import Foundation
import NVRIndex
import NVRRecorder
import TestSupport

/// The Insta360 simulator in-process on a free loopback port with its own card folder, and a
/// recorder with one `insta360` camera on it whose RTMP listener a pusher can reach.
final class Insta360Fixture: @unchecked Sendable {
    // @unchecked Sendable: immutable after init; the parts are thread-safe.
    let sim: Insta360Simulator
    let port: Int
    let cardRoot: String
    let rtmpPort = TestEnvironment.freePort()
    let streamKey = "x3-front"
    let harness: RecorderHarness
    let server: TestServer
    private var pushers: [RTMPPusher] = []

    init(configure: (inout Insta360Simulator.Options) -> Void = { _ in }, camera extra: [String: String] = [:])
        async throws
    {
        cardRoot = TestEnvironment.tempDir("insta360-card")
        var o = Insta360Simulator.Options(cardRoot: cardRoot)
        o.httpPort = 0
        o.commandSeconds = 0.5
        o.logger.logLevel = .warning
        configure(&o)
        let sim = try Insta360Simulator(o)
        self.sim = sim
        port = try await TestEnvironment.startServer("Insta360 simulator") { onBound in
            try await sim.run(onBound: onBound)
        }
        harness = try RecorderHarness(segmentSeconds: 3) { $0.cardRefreshSeconds = 5 }
        var config = [
            "base_url": "http://127.0.0.1:\(port)", "stream_key": streamKey, "rtmp_address": "127.0.0.1",
            "rtmp_port": String(rtmpPort), "http_timeout": "2", "updates_wait_seconds": "2", "status_seconds": "1",
            "list_page_size": "3", "command_poll_ms": "200",
        ]
        config.merge(extra) { $1 }
        try harness.add("x3", plugin: "insta360", config)
        try harness.recorder.start(addDemoIfEmpty: false)
        server = try await TestServer(
            index: harness.index, storage: harness.recorder.storage, recorder: harness.recorder)
    }

    deinit {
        for p in pushers { p.stop() }
        let sim = self.sim
        let root = cardRoot
        Task {
            await sim.shutdown()
            TestEnvironment.cleanup(root)
        }
    }

    var session: CameraSession? { harness.recorder.session(named: "x3") }
    var rtmpURL: String { "rtmp://127.0.0.1:\(rtmpPort)/live/\(streamKey)" }

    /// Starts a pusher, as the camera's app would.
    func push() -> RTMPPusher {
        let p = RTMPPusher(url: rtmpURL)
        pushers.append(p)
        p.start()
        return p
    }

    func segments() throws -> [SegmentRecord] { try harness.segments("x3") }
    func liveRuns() throws -> Set<Int64> {
        Set(try segments().filter { $0.source == "live" && $0.frames > 0 }.map(\.runID))
    }

    /// The plugin's status right now (what the recorder saves and the API shows).
    func pluginStatus() -> [String: Any] {
        guard let json = session?.pluginInstance?.status(),
            let o = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        else { return [:] }
        return o
    }

    /// The camera's plugin status as the API shows it.
    func status() async throws -> [String: Any] {
        try await server.get("/api/cameras/x3").json["camera"] as? [String: Any] ?? [:]
    }
}
