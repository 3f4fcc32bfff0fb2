import CamSim
import Foundation
import TestSupport
import Testing
import TuyaAPI

/// The Tuya cloud client against the simulated OpenAPI, which checks every signature for real:
/// token handling (first use, expiry mid-run → 1010 → refresh and retry), stream allocation,
/// status, the cloud-storage timeline, and clear errors for a wrong secret, an unknown device
/// and an unreachable cloud.
@Suite(.serialized) struct TuyaCloudTests {
    static let device = "bf12ab34cd56ef78gh90ij"

    func start(_ configure: (inout TuyaCloudSimulator.Options) -> Void = { _ in }) async throws -> (
        TuyaCloudSimulator, Int
    ) {
        var o = TuyaCloudSimulator.Options()
        o.logger.logLevel = .warning
        configure(&o)
        let sim = TuyaCloudSimulator(o)
        let port = try await TestEnvironment.startServer("Tuya cloud simulator") { onBound in
            try await sim.run(onBound: onBound)
        }
        return (sim, port)
    }

    func cloud(_ port: Int, secret: String? = nil) -> TuyaCloud {
        let o = TuyaCloudSimulator.Options()
        return TuyaCloud(
            TuyaCloud.Config(baseURL: "http://127.0.0.1:\(port)", clientID: o.clientID, secret: secret ?? o.secret))
    }

    @Test func allocatesFreshURLsAndRenewsAnExpiredToken() async throws {
        let (sim, port) = try await start()
        defer { Task { await sim.shutdown() } }
        let n = Counter()
        sim.setAllocator { id in "rtsp://127.0.0.1:8554/\(id)/\(n.next())" }
        let c = cloud(port)
        let first = try await TestEnvironment.blocking { try c.allocateStream(deviceID: Self.device) }
        let second = try await TestEnvironment.blocking { try c.allocateStream(deviceID: Self.device) }
        #expect(first != second && first.hasPrefix("rtsp://127.0.0.1:8554/\(Self.device)/"), "\(first) \(second)")
        #expect(sim.stats.tokens == 1 && sim.stats.allocations == 2 && sim.stats.badSigns == 0)

        // The token expires mid-run: the cloud says 1010, the client refreshes and retries.
        sim.expireTokens()
        let third = try await TestEnvironment.blocking { try c.allocateStream(deviceID: Self.device) }
        #expect(
            !third.isEmpty && sim.stats.expiredTokens == 1 && sim.stats.refreshes == 1 && c.tokenRenewals == 1,
            "\(sim.stats)")

        let status = try await TestEnvironment.blocking {
            try c.deviceStatus(deviceID: Self.device).mapValues { "\($0)" }
        }
        #expect(status["sd_status"] == "1" && status["record_mode"] == "2", "\(status)")

        let now = Int64(Date().timeIntervalSince1970)
        sim.addCloudRecording(deviceID: Self.device, start: now - 3600, stop: now - 3000)
        sim.addCloudRecording(deviceID: Self.device, start: now - 86_400 * 3, stop: now - 86_400 * 3 + 60)
        let slices = try await TestEnvironment.blocking {
            try c.cloudTimeline(deviceID: Self.device, from: now - 86_400, to: now)
        }
        #expect(slices.count == 1 && slices.first?.start == now - 3600 && slices.first?.stop == now - 3000)
    }

    @Test func wrongSecretUnknownDeviceAndNoCloudAreClear() async throws {
        let (sim, port) = try await start()
        defer { Task { await sim.shutdown() } }
        let wrong = cloud(port, secret: "00000000000000000000000000000000")
        do {
            _ = try await TestEnvironment.blocking { try wrong.allocateStream(deviceID: Self.device) }
            Issue.record("a wrong secret worked")
        } catch {
            #expect("\(error)".contains("code 1004") && "\(error)".contains("check client_id and secret"), "\(error)")
        }
        #expect(sim.stats.badSigns >= 1)
        let c = cloud(port)
        do {
            _ = try await TestEnvironment.blocking { try c.allocateStream(deviceID: "nosuchdevice") }
            Issue.record("an unknown device worked")
        } catch {
            #expect("\(error)".contains("code 1106") && "\(error)".contains("unknown device"), "\(error)")
        }
        let gone = TuyaCloud(TuyaCloud.Config(baseURL: "http://127.0.0.1:9", clientID: "x", secret: "y"))
        do {
            _ = try await TestEnvironment.blocking { try gone.allocateStream(deviceID: Self.device) }
            Issue.record("no cloud worked")
        } catch {
            #expect("\(error)".contains("cloud unreachable at 127.0.0.1"), "\(error)")
        }
    }
}

extension TuyaCloudTests {
    /// `nvr plugins` states what the Tuya plugin cannot reach (the SD card, behind the P2P SDK).
    @Test func pluginsListStatesTheSDCardLimit() throws {
        let dir = TestEnvironment.tempDir("tuya-plugins")
        defer { TestEnvironment.cleanup(dir) }
        let config = dir + "/nvr.toml"
        try "[storage]\nroot = \"\(dir)/root\"\n[plugins]\ndir = \"\(TestEnvironment.buildDir)\"\n".write(
            toFile: config, atomically: true, encoding: .utf8)
        let r = try runProcess(TestEnvironment.nvrExecutable, ["plugins", "--config", config])
        #expect(r.status == 0, "\(r.stderr)")
        let line = r.stdout.split(separator: "\n").first {
            $0.hasPrefix("tuya ") && $0.contains("live-url,events,card-list") && $0.hasSuffix("ok")
        }
        #expect(line != nil, "\(r.stdout)")
        #expect(
            r.stdout.contains("tuya: ")
                && r.stdout.contains("SD-card playback is only reachable through Tuya's closed P2P SDK"), "\(r.stdout)")
    }
}

/// A counter the allocator closure can share.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    func next() -> Int {
        lock.withLock {
            n += 1
            return n
        }
    }
}
