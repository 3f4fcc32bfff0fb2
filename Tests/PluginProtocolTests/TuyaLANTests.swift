import CamSim
import Foundation
import Synchronization
import TestSupport
import Testing
import TuyaAPI

/// The Tuya LAN client against a simulated device speaking 3.3 and 3.4 over real TCP: data
/// points on connect, motion pushes, heartbeats, damaged frames dropped with the stream
/// recovering, and a wrong local key reported as such.
@Suite(.serialized, .tags(.system)) struct TuyaLANTests {
    final class Seen: Sendable {
        let dps = Mutex<[[String: JSONScalar]]>([])
        var motions: Int { dps.withLock { $0.filter { $0["115"] != nil }.count } }
        var all: [String: JSONScalar] { dps.withLock { $0.reduce(into: [:]) { $0.merge($1) { $1 } } } }
    }

    func client(_ sim: TuyaDeviceSimulator, key: String? = nil) -> (TuyaLANClient, Seen) {
        var c = TuyaLANClient.Config(
            host: "127.0.0.1", deviceID: sim.deviceID, localKey: key ?? sim.localKey, version: sim.version)
        c.port = sim.port
        c.heartbeatSeconds = 1
        c.timeout = 2
        c.reconnectSeconds = 0.5
        let client = TuyaLANClient(c)
        let seen = Seen()
        client.onDataPoints = { dps, _ in seen.dps.withLock { $0.append(dps) } }
        return (client, seen)
    }

    @Test(arguments: [TuyaLAN.Version.v33, .v34])
    func dataPointsMotionAndDamagedFrames(version: TuyaLAN.Version) async throws {
        let sim = try TuyaDeviceSimulator(
            deviceID: "bf12ab34cd56ef78gh90ij", localKey: "a1b2c3d4e5f6g7h8", version: version, motionSeconds: 1)
        defer { sim.stop() }
        let (client, seen) = client(sim)
        client.start()
        defer { client.stop() }
        #expect(
            await TestEnvironment.eventually(timeout: 10) { seen.all["110"] != nil && seen.motions >= 2 },
            "\(seen.all) \(client.stats)")
        #expect(
            seen.all["110"] == .number(1) && seen.all["145"] == .number(87) && seen.all["150"] == .bool(true)
                && seen.all["151"] == .string("2"))
        #expect(await TestEnvironment.eventually(timeout: 5) { sim.stats.heartbeats >= 2 })
        if version == .v34 { #expect(sim.stats.handshakes >= 1) }
        // One connection, counted the same way on both versions (a readable answer).
        #expect(client.stats.connects == 1, "\(client.stats)")

        for damage in [TuyaDeviceSimulator.Damage.badIntegrity, .garbage, .oversized, .undecryptable, .truncated] {
            let before = seen.motions
            let rejected = client.stats.framesRejected
            let connects = client.stats.connects
            sim.damageNextPush(damage)
            #expect(
                await TestEnvironment.eventually(timeout: 12) { seen.motions >= before + 2 },
                "recovers after \(damage): \(client.stats)")
            switch damage {
            case .truncated: #expect(client.stats.connects > connects, "the device dropped mid-frame: reconnected")
            case .undecryptable:
                // Dropped, and the link kept: no reconnect, so no push is lost meanwhile.
                #expect(client.stats.framesRejected > rejected && client.stats.connects == connects, "\(client.stats)")
            default: #expect(client.stats.framesRejected > rejected, "\(damage) was rejected")
            }
        }
        #expect(client.stats.lastError == nil || client.stats.connected)
    }

    @Test(arguments: [TuyaLAN.Version.v33, .v34])
    func aWrongLocalKeyIsClear(version: TuyaLAN.Version) async throws {
        let sim = try TuyaDeviceSimulator(
            deviceID: "bf12ab34cd56ef78gh90ij", localKey: "a1b2c3d4e5f6g7h8", version: version, motionSeconds: 1)
        defer { sim.stop() }
        let (client, seen) = client(sim, key: "0000000000000000")
        client.start()
        defer { client.stop() }
        #expect(
            await TestEnvironment.eventually(timeout: 10) {
                client.stats.lastError?.contains("wrong local key") == true
            }, "\(client.stats)")
        #expect(seen.dps.withLock { $0.isEmpty })
        // The device hung up on our first request, as real ones do; we said what to check.
        #expect(sim.stats.refused >= 1 && client.stats.connects == 0)
        #expect(client.stats.lastError?.contains("local_key") == true, "\(client.stats)")
    }

    /// The simulator checked by an independent client: tinytuya reads its data points with the
    /// right key, and with a wrong one says "Check device key or version" (what it says of a
    /// real device with a wrong key), on 3.3 and 3.4.
    @Test(arguments: [TuyaLAN.Version.v33, .v34])
    func tinytuyaAgreesWithTheSimulator(version: TuyaLAN.Version) throws {
        let sim = try TuyaDeviceSimulator(
            deviceID: "bf12ab34cd56ef78gh90ij", localKey: "a1b2c3d4e5f6g7h8", version: version, motionSeconds: 60)
        defer { sim.stop() }
        let script = """
            import json, sys, tinytuya
            dev, key, ver, port = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
            d = tinytuya.Device(dev, "127.0.0.1", key, version=ver, port=port, connection_timeout=2, connection_retry_limit=1)
            d.set_socketRetryLimit(1)
            print(json.dumps(d.status()))
            """
        let python = TestEnvironment.repoRoot + "/.build/test-venv/bin/python"
        let good = try runProcess(
            python, ["-c", script, sim.deviceID, sim.localKey, version.rawValue, String(sim.port)])
        #expect(
            good.status == 0 && good.stdout.contains("\"110\": 1"), "tinytuya, right key: \(good.stdout) \(good.stderr)"
        )
        let bad = try runProcess(
            python, ["-c", script, sim.deviceID, "0000000000000000", version.rawValue, String(sim.port)])
        #expect(bad.stdout.contains("Check device key or version"), "tinytuya, wrong key: \(bad.stdout) \(bad.stderr)")
    }

    /// The LAN announcement the simulator broadcasts (and the plugin reads), checked by
    /// tinytuya's own reader of device broadcasts; damaged or foreign datagrams are ignored.
    @Test func discoveryBroadcastsAsTinytuyaReadsThem() throws {
        let a = TuyaDiscovery.Announcement(
            ip: "192.168.1.40", deviceID: "bf12ab34cd56ef78gh90ij", productKey: "keyj3w8ngv9hpfce", version: "3.3")
        let datagram = try TuyaDiscovery.datagram(a)
        let python = TestEnvironment.repoRoot + "/.build/test-venv/bin/python"
        let r = try runProcess(
            python,
            [
                "-c", "import sys, tinytuya; print(tinytuya.decrypt_udp(bytes.fromhex(sys.argv[1])))",
                datagram.map { String(format: "%02x", $0) }.joined(),
            ])
        let decoded = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        #expect(
            decoded?["gwId"] as? String == a.deviceID && decoded?["ip"] as? String == a.ip
                && decoded?["version"] as? String == "3.3",
            "tinytuya: \(r.stdout) \(r.stderr)")
        #expect(TuyaDiscovery.announcement(in: datagram) == a)
        // A 3.1 device's clear JSON on port 6666 reads too.
        let clear = TuyaLAN.encode(
            TuyaLAN.Frame(seq: 0, command: 0x13, retcode: 0, payload: Data(#"{"ip":"10.0.0.9","gwId":"abc123"}"#.utf8)),
            version: .v33, integrityKey: Data())
        #expect(TuyaDiscovery.announcement(in: clear)?.deviceID == "abc123")
        var damaged = [UInt8](datagram)
        damaged[30] ^= 0xFF
        for junk in [
            Data(), Data(damaged), datagram.prefix(20), Data(repeating: 0x55, count: 64),
            TuyaLAN.encode(
                TuyaLAN.Frame(seq: 0, command: 0x13, retcode: 0, payload: Data(#"{"ip":"x","gwId":"../"}"#.utf8)),
                version: .v33, integrityKey: Data()),
        ] {
            #expect(TuyaDiscovery.announcement(in: junk) == nil)
        }
    }
}
