import Foundation
import TuyaAPI

#if canImport(Glibc)
    import Glibc
#endif

/// A Tuya IPC camera's LAN side (TCP, protocol 3.3 or 3.4) as tinytuya's PROTOCOL.md and
/// PROTOCOLS.md describe it: answers the 3.4 session key exchange, DP queries and heartbeats,
/// and pushes a motion data point (115) every `motionSeconds`. A test can make the next push
/// damaged (bad CRC/HMAC, garbage, absurd length, truncated) to see the client cope.
public final class TuyaDeviceSimulator: @unchecked Sendable {
    // @unchecked Sendable: mutable state is guarded by `lock`; sockets belong to their threads.
    /// `undecryptable`: a well-formed frame (good CRC or HMAC) whose payload is sealed with
    /// another key, as a device's firmware glitch or a neighbour's frame would be.
    /// How long after a request it cannot read (a wrong key) the device hangs up.
    public static let hangUpSeconds: Double = 6

    public enum Damage: Sendable { case badIntegrity, garbage, oversized, truncated, undecryptable }

    public let deviceID: String
    public let localKey: String
    public let version: TuyaLAN.Version
    public private(set) var port = 0
    private let listener: Int32
    private let lock = NSLock()
    private var stopped = false
    private var motionSeconds: Double
    private var pendingDamage: [Damage] = []
    private var counters = (connections: 0, queries: 0, heartbeats: 0, motionPushes: 0, handshakes: 0, refused: 0)
    /// Data points the device reports (sd_status, sd_storge, battery, record_switch, record_mode…).
    private var dps: [String: Any] = [
        "109": "62521344|30512128|32009216", "110": 1, "145": 87, "150": true, "151": "2", "134": true,
    ]

    public init(
        deviceID: String, localKey: String, version: TuyaLAN.Version, motionSeconds: Double = 3, port requested: Int = 0
    ) throws {
        self.deviceID = deviceID
        self.localKey = localKey
        self.version = version
        self.motionSeconds = motionSeconds
        let (fd, bound) = try listenTCP(port: requested)
        port = bound
        listener = fd
        let t = Thread { [self] in acceptLoop() }
        t.name = "tuya device"
        t.start()
    }

    public func stop() {
        lock.withLock { stopped = true }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// Announces the device on the LAN as devices do (TuyaDiscovery): the 3.3 datagram to
    /// `broadcast`:6667 every `seconds`, naming `ip` as its address, until stopped.
    public func announce(ip: String, broadcast: String, every seconds: Double = 5) throws {
        let datagram = [UInt8](
            try TuyaDiscovery.datagram(
                .init(ip: ip, deviceID: deviceID, productKey: "keyj3w8ngv9hpfce", version: version.rawValue)))
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw SimulatorError("udp socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &one, socklen_t(MemoryLayout<Int32>.size))
        var to = sockaddr_in()
        to.sin_family = sa_family_t(AF_INET)
        to.sin_port = UInt16(6667).bigEndian
        to.sin_addr.s_addr = inet_addr(broadcast)
        let target = to
        let t = Thread { [self] in
            defer { close(fd) }
            var to = target
            while !isStopped {
                _ = withUnsafePointer(to: &to) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(fd, datagram, datagram.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
                Thread.sleep(forTimeInterval: seconds)
            }
        }
        t.name = "tuya announce"
        t.start()
    }

    public func damageNextPush(_ d: Damage) { lock.withLock { pendingDamage.append(d) } }
    public func setMotionEvery(_ seconds: Double) { lock.withLock { motionSeconds = seconds } }
    public func set(dp: String, _ value: Any) { lock.withLock { dps[dp] = value } }
    public var stats:
        (connections: Int, queries: Int, heartbeats: Int, motionPushes: Int, handshakes: Int, refused: Int)
    { lock.withLock { counters } }
    private var isStopped: Bool { lock.withLock { stopped } }

    private func acceptLoop() {
        while !isStopped {
            let c = accept(listener, nil, nil)
            if c < 0 {
                if isStopped { return }
                continue
            }
            lock.withLock { counters.connections += 1 }
            let t = Thread { [self] in serve(c) }
            t.name = "tuya device client"
            t.start()
        }
    }

    /// One client: frames in, answers and pushes out, until it goes or we stop.
    private func serve(_ fd: Int32) {
        defer { close(fd) }
        var tv = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let local = Data(localKey.utf8)
        var key = local
        var buffer = Data()
        var seq: UInt32 = 100
        var clientNonce = Data()
        var remoteNonce = Data()
        var nextMotion = Date(timeIntervalSinceNow: lock.withLock { motionSeconds })
        var refusedAt: Date?

        func send(_ command: UInt32, _ json: [String: Any]?, raw: Data? = nil, damage: Damage? = nil) -> Bool {
            var payload = raw ?? Data()
            if let json, let body = try? JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]) {
                let sealKey = damage == .undecryptable ? Data("ffffffffffffffff".utf8) : key
                payload = (try? TuyaLAN.seal(body, command: command, version: version, key: sealKey)) ?? Data()
            }
            var bytes = TuyaLAN.encode(
                TuyaLAN.Frame(seq: seq, command: command, retcode: 0, payload: payload), version: version,
                integrityKey: key)
            seq &+= 1
            switch damage {
            case .badIntegrity?: bytes[bytes.count - 6] ^= 0xFF
            case .garbage?: bytes = Data("HTTP/1.1 400 nonsense\r\n".utf8) + bytes
            case .oversized?: bytes.replaceSubrange(12..<16, with: [0x10, 0, 0, 0])
            case .truncated?: bytes = bytes.prefix(bytes.count / 2)
            case .undecryptable?, nil: break
            }
            let ok =
                bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
            // A truncated frame is the end of that connection: the device "reboots" mid-frame.
            return ok && damage != .truncated
        }

        while !isStopped {
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = recv(fd, &chunk, chunk.count, 0)
            if n == 0 { return }
            if n > 0 { buffer.append(contentsOf: chunk[0..<n]) }
            // As real devices do with a wrong local key: a request that does not authenticate
            // (3.4's HMAC) or decrypt (3.3's query) gets no answer at all, and the device hangs
            // up a while later. tinytuya (checked against this in TuyaLANTests) reports that as
            // "Check device key or version".
            if let refusedAt {
                if Date().timeIntervalSince(refusedAt) >= Self.hangUpSeconds { return }
                buffer.removeAll()
                continue
            }
            while true {
                let decoded: (TuyaLAN.Frame, Int)?
                do {
                    decoded = try TuyaLAN.decode(buffer, version: version, integrityKey: key, fromDevice: false)
                } catch {
                    decoded = nil
                    refusedAt = Date()
                }
                if refusedAt == nil, let (frame, _) = decoded, version == .v33,
                    frame.command == TuyaLAN.Command.dpQuery.rawValue,
                    (try? TuyaLAN.open(frame.payload, version: version, key: key)) == nil
                {
                    refusedAt = Date()
                }
                if refusedAt != nil {
                    lock.withLock { counters.refused += 1 }
                    break
                }
                guard let (frame, used) = decoded else { break }
                buffer.removeFirst(used)
                switch TuyaLAN.Command(rawValue: frame.command) {
                case .sessionKeyStart?:
                    guard let nonce = try? TuyaCipher(key: local).decrypt(frame.payload), nonce.count == 16 else {
                        return
                    }
                    clientNonce = nonce
                    remoteNonce = Data((0..<16).map { _ in UInt8.random(in: 0...255) })
                    guard
                        let answer = try? TuyaSession.respond(
                            remoteNonce: remoteNonce, localNonce: clientNonce, localKey: local),
                        send(TuyaLAN.Command.sessionKeyResponse.rawValue, nil, raw: answer)
                    else { return }
                case .sessionKeyFinish?:
                    guard
                        let k = try? TuyaSession.key(localNonce: clientNonce, remoteNonce: remoteNonce, localKey: local)
                    else { return }
                    key = k
                    lock.withLock { counters.handshakes += 1 }
                case .dpQuery?, .dpQueryNew?:
                    lock.withLock { counters.queries += 1 }
                    guard send(frame.command, statusDocument(lock.withLock { dps })) else { return }
                case .heartBeat?:
                    lock.withLock { counters.heartbeats += 1 }
                    guard send(TuyaLAN.Command.heartBeat.rawValue, nil, raw: Data()) else { return }
                default:
                    break
                }
            }
            if buffer.count > 4096 { buffer.removeAll() }
            if refusedAt == nil, Date() >= nextMotion {
                let (every, damage) = lock.withLock { () -> (Double, Damage?) in
                    counters.motionPushes += 1
                    return (motionSeconds, pendingDamage.isEmpty ? nil : pendingDamage.removeFirst())
                }
                nextMotion = Date(timeIntervalSinceNow: every)
                let motion = ["115": String(Int(Date().timeIntervalSince1970))]
                guard send(TuyaLAN.Command.status.rawValue, statusDocument(motion), damage: damage) else { return }
            }
        }
    }

    /// 3.3 sends `{"devId","dps","t"}`; 3.4 wraps it as `{"protocol":4,"t","data":{"dps"}}`.
    private func statusDocument(_ dps: [String: Any]) -> [String: Any] {
        let t = Int(Date().timeIntervalSince1970)
        return version == .v33
            ? ["devId": deviceID, "dps": dps, "t": t] : ["protocol": 4, "t": t, "data": ["dps": dps]]
    }
}
