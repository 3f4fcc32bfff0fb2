import CamSim
import Foundation
import Synchronization
import TestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The GoPro simulator in-process on a free loopback port, with its own card folder.
final class GoProFixture: Sendable {
    let sim: GoProSimulator
    let port: Int
    let cardRoot: String

    init(configure: (inout GoProSimulator.Options) -> Void = { _ in }) async throws {
        cardRoot = TestEnvironment.tempDir("gopro-card")
        var o = GoProSimulator.Options(cardRoot: cardRoot)
        o.httpPort = 0
        o.logger.logLevel = .warning
        configure(&o)
        let sim = try GoProSimulator(o)
        self.sim = sim
        port = try await TestEnvironment.startServer("GoPro simulator") { onBound in try await sim.run(onBound: onBound)
        }
    }

    deinit {
        sim.stopEncoder()
        let sim = self.sim
        let root = cardRoot
        Task {
            await sim.shutdown()
            TestEnvironment.cleanup(root)
        }
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// A free UDP port for the camera's stream.
    static func freeUDPPort() -> Int { TestEnvironment.freePort(udp: true) }

    /// GET a path of the simulator.
    func get(_ path: String) async throws -> (status: Int, body: Data) {
        var r = URLRequest(url: URL(string: baseURL + path)!)
        r.timeoutInterval = 10
        let (data, response) = try await URLSession.shared.data(for: r)
        return ((response as! HTTPURLResponse).statusCode, data)
    }
}
