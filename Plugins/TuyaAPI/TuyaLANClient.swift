import Foundation
import NVRWorker
import PluginSupport

/// A connection to one Tuya device's LAN port (TCP 6668, protocol 3.3 or 3.4) on its own
/// thread: the 3.4 session key exchange, a DP query on connect, heartbeats, status pushes
/// decoded into data points, and reconnects. Damaged frames (bad CRC or HMAC, garbage,
/// absurd lengths) are dropped and counted; the stream resynchronises on the next frame.
public final class TuyaLANClient: @unchecked Sendable {
    // @unchecked Sendable: `counters` and `worker` are guarded by `lock`; the socket belongs to
    // the worker's thread.
    public struct Config: Sendable {
        public var host: String
        public var port = 6668
        public var deviceID: String
        public var localKey: String
        public var version: TuyaLAN.Version
        public var heartbeatSeconds: Double = 10
        public var timeout: Double = 5
        public var reconnectSeconds: Double = 5
        public init(host: String, deviceID: String, localKey: String, version: TuyaLAN.Version) {
            self.host = host
            self.deviceID = deviceID
            self.localKey = localKey
            self.version = version
        }
    }

    public struct Stats: Sendable, Equatable {
        public var connects = 0
        public var framesRead = 0
        public var framesRejected = 0
        public var heartbeats = 0
        public var lastError: String?
        public var connected = false
    }

    public let config: Config
    /// Data points as the device reported them, and whether the device pushed them (a change,
    /// command 8) rather than answered a query (its current state).
    public var onDataPoints: (@Sendable ([String: JSONScalar], Bool) -> Void)?
    /// A line for the log: connected, lost, rejected frames, wrong key. `problem`: worth a
    /// warning (the link failed, a frame was dropped), not news.
    public var onLog: (@Sendable (_ line: String, _ problem: Bool) -> Void)?

    private let lock = NSLock()
    /// The running connection's thread (a new one after each stop).
    private var worker: Worker?
    private var counters = Stats()

    public init(_ config: Config) { self.config = config }

    public var stats: Stats { lock.withLock { counters } }

    public func start() {
        let w = lock.withLock { () -> Worker? in
            guard worker == nil else { return nil }
            worker = Worker(name: "tuya lan")
            return worker
        }
        if let w { w.start { [self] in run(w) } }
    }

    /// Stops and waits for the thread (at most one read timeout).
    public func stop() {
        let w = lock.withLock { () -> Worker? in
            let w = worker
            worker = nil
            return w
        }
        w?.stop()
    }

    private func update(_ f: (inout Stats) -> Void) { lock.withLock { f(&counters) } }

    private func run(_ worker: Worker) {
        while !worker.isStopping {
            do {
                try session(worker)
            } catch {
                update {
                    $0.lastError = "\(error)"
                    $0.connected = false
                }
                onLog?("tuya LAN \(config.host): \(error); reconnecting in \(Int(config.reconnectSeconds)) s", true)
            }
            worker.wait(seconds: config.reconnectSeconds)
        }
    }

    /// One connection, until it fails or we stop.
    private func session(_ worker: Worker) throws {
        guard let localKey = config.localKey.data(using: .utf8), localKey.count == 16 else {
            throw TuyaCipher.Failure(description: "local key must be 16 characters")
        }
        let conn = try TCPConnection(host: config.host, port: config.port, timeout: config.timeout)
        defer { conn.close() }
        var buffer = Data()
        var seq: UInt32 = 1
        // Nothing valid heard on this connection yet: a device that hangs up now refused our
        // first request, which is what a device does with a wrong local key (or version).
        var heardAnything = false
        var key = localKey  // payload key; the 3.4 session key after the exchange
        let version = config.version

        func send(_ command: TuyaLAN.Command, json: [String: Any]?, raw: Data? = nil) throws {
            let payload: Data
            if let raw {
                payload = raw
            } else {
                let body = try JSONSerialization.data(withJSONObject: json ?? [:], options: [.sortedKeys])
                payload = try TuyaLAN.seal(body, command: command.rawValue, version: version, key: key)
            }
            try conn.write(
                TuyaLAN.encode(
                    TuyaLAN.Frame(seq: seq, command: command.rawValue, payload: payload), version: version,
                    integrityKey: key))
            seq &+= 1
        }

        /// The next good frame within `wait` seconds (nil: none yet); damaged ones are skipped.
        func nextFrame(wait: Double) throws -> TuyaLAN.Frame? {
            let deadline = Date(timeIntervalSinceNow: wait)
            while true {
                do {
                    if let (frame, used) = try TuyaLAN.decode(
                        buffer, version: version, integrityKey: key, fromDevice: true)
                    {
                        buffer.removeFirst(used)
                        update { $0.framesRead += 1 }
                        heardAnything = true
                        return frame
                    }
                } catch let e as TuyaLAN.FrameError {
                    buffer.removeFirst(min(max(e.skip, 1), buffer.count))
                    update { $0.framesRejected += 1 }
                    onLog?("tuya LAN \(config.host): dropped a frame: \(e)", true)
                    continue
                }
                if buffer.count > TuyaLAN.maxLength * 2 { buffer.removeAll() }
                let left = deadline.timeIntervalSinceNow
                if left <= 0 || worker.isStopping { return nil }
                guard let more = try conn.receive(wait: min(left, 0.5)) else { continue }
                if more.isEmpty {
                    throw TuyaCipher.Failure(
                        description: heardAnything
                            ? "the device closed the connection"
                            : "the device closed the connection after our first request: a wrong local key or protocol version (check local_key and lan_version \(version.rawValue))"
                    )
                }
                buffer.append(more)
            }
        }

        if version == .v34 {
            var nonce = Data(count: 16)
            for i in 0..<16 { nonce[i] = UInt8.random(in: 0...255) }
            try send(.sessionKeyStart, json: nil, raw: try TuyaSession.start(localNonce: nonce, localKey: localKey))
            var answer: TuyaLAN.Frame?
            let deadline = Date(timeIntervalSinceNow: config.timeout)
            while answer == nil, Date() < deadline {
                let before = stats.framesRejected
                answer = try nextFrame(wait: deadline.timeIntervalSinceNow)
                if answer == nil, stats.framesRejected > before {
                    throw TuyaCipher.Failure(description: "the device's answers do not authenticate: wrong local key")
                }
                if let a = answer, a.command != TuyaLAN.Command.sessionKeyResponse.rawValue { answer = nil }
            }
            guard let answer else {
                throw TuyaCipher.Failure(
                    description:
                        "no session key answer within \(Int(config.timeout)) s: a wrong local key, or not a 3.4 device (check local_key and lan_version)"
                )
            }
            let (remote, finish) = try TuyaSession.finish(
                response: answer.payload, localNonce: nonce, localKey: localKey)
            try send(.sessionKeyFinish, json: nil, raw: finish)
            key = try TuyaSession.key(localNonce: nonce, remoteNonce: remote, localKey: localKey)
            try send(.dpQueryNew, json: [:])
        } else {
            let t = String(Int(Date().timeIntervalSince1970))
            try send(
                .dpQuery, json: ["gwId": config.deviceID, "devId": config.deviceID, "uid": config.deviceID, "t": t])
        }
        var lastHeard = Date()
        var undecryptable = 0
        var nextBeat = Date(timeIntervalSinceNow: config.heartbeatSeconds)
        var announced = false
        while !worker.isStopping {
            if Date() >= nextBeat {
                try send(.heartBeat, json: version == .v33 ? ["gwId": config.deviceID, "devId": config.deviceID] : [:])
                update { $0.heartbeats += 1 }
                nextBeat = Date(timeIntervalSinceNow: config.heartbeatSeconds)
            }
            if Date().timeIntervalSince(lastHeard) > config.heartbeatSeconds * 3 {
                // Silence from the start is how a device treats a request it cannot read.
                throw TuyaCipher.Failure(
                    description: heardAnything
                        ? "nothing from the device for \(Int(config.heartbeatSeconds * 3)) s"
                        : "the device did not answer our first request: a wrong local key or protocol version (check local_key and lan_version \(version.rawValue))"
                )
            }
            guard let frame = try nextFrame(wait: min(1, nextBeat.timeIntervalSinceNow + 0.01)) else { continue }
            lastHeard = Date()
            guard !frame.payload.isEmpty, frame.command != TuyaLAN.Command.heartBeat.rawValue else { continue }
            let json: Data
            do {
                json = try TuyaLAN.open(frame.payload, version: version, key: key)
                undecryptable = 0
            } catch {
                // One frame that does not decrypt is dropped and the link kept (pushes would be
                // lost while reconnecting); only a run of them means the key is wrong.
                undecryptable += 1
                update { $0.framesRejected += 1 }
                if undecryptable >= 3 || !announced {
                    throw TuyaCipher.Failure(
                        description: "cannot decrypt the device's status: a wrong local key (check local_key): \(error)"
                    )
                }
                onLog?("tuya LAN \(config.host): dropped a status that does not decrypt: \(error)", true)
                continue
            }
            guard !json.isEmpty else { continue }
            guard let dps = Self.dataPoints(json) else {
                onLog?("tuya LAN \(config.host): ignored a status that is not JSON with dps", true)
                continue
            }
            if !announced {
                announced = true
                // A connection counts once the device answered with a readable status, for 3.3
                // and 3.4 alike (not when the socket opened, nor at 3.4's key exchange).
                update {
                    $0.connected = true
                    $0.lastError = nil
                    $0.connects += 1
                }
                onLog?("tuya LAN \(config.host): connected (protocol \(version.rawValue))", false)
            }
            onDataPoints?(dps, frame.command == TuyaLAN.Command.status.rawValue)
        }
    }

    /// `{"dps":{...}}` (3.3) or `{"protocol":4,"data":{"dps":{...}}}` (3.4).
    package static func dataPoints(_ json: Data) -> [String: JSONScalar]? {
        guard let o = try? JSONSerialization.jsonObject(with: json) as? [String: Any] else { return nil }
        let dps = (o["dps"] as? [String: Any]) ?? ((o["data"] as? [String: Any])?["dps"] as? [String: Any])
        return dps?.compactMapValues(JSONScalar.init)
    }
}

/// A data point's value: Tuya sends booleans, numbers and strings.
public enum JSONScalar: Sendable, Equatable, CustomStringConvertible {
    case bool(Bool)
    case number(Double)
    case string(String)

    init?(_ v: Any) {
        if let n = v as? NSNumber {
            // JSON true/false arrive as NSNumbers of type char/bool.
            let type = String(cString: n.objCType)
            self = type == "c" || type == "B" ? .bool(n.boolValue) : .number(n.doubleValue)
        } else if let s = v as? String {
            self = .string(s)
        } else {
            return nil
        }
    }

    public var description: String {
        switch self {
        case .bool(let b): String(b)
        case .number(let n): Int64(exactly: n).map(String.init) ?? String(n)
        case .string(let s): s
        }
    }
}
