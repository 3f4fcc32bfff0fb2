import CMosquitto
import Foundation
import Logging
import NVRTime
import NVRWorker
import Synchronization

/// One connection to an MQTT broker, through Debian's libmosquitto: the network loop runs on
/// a thread of its own, which connects, reconnects after 1 s doubling to 30 s, and says why
/// it is not connected (refused — a wrong password —, unreachable). `publish` may be called
/// from any thread and never blocks on the network: while the broker is away it returns false.
public final class MQTTConnection: @unchecked Sendable {
    // @unchecked Sendable: `handle` is libmosquitto's, which is thread-safe for publish and
    // subscribe (Debian builds it with threads); only the loop thread runs the network loop,
    // connects and destroys it. Mutable Swift state is behind `state`.
    public struct Options: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
        CustomReflectable
    {
        public var host: String
        public var port: Int
        public var user: String?
        /// Never logged, never shown (`description`, `debugDescription` and the mirror leave it out).
        public var password: String?
        /// TLS to the broker, verified against `tlsCA` (a PEM file) or, without it, the system store.
        public var tls = false
        public var tlsCA: String?
        public var clientID = "nvr"
        /// 4: MQTT 3.1.1, 5: MQTT 5.
        public var protocolVersion = 4
        public var keepAliveSeconds = 30
        /// The last will: published by the broker when this connection dies without saying goodbye.
        public var will: (topic: String, payload: String)?

        public init(host: String, port: Int = 1883) {
            self.host = host
            self.port = port
        }

        /// For logs and test failures: the password as set or not, never itself.
        public var description: String {
            "mqtt\(tls ? "s" : "")://\(user.map { "\($0)@" } ?? "")\(host):\(port) password: \(password == nil ? "none" : "***")"
        }
        public var debugDescription: String { description }
        public var customMirror: Mirror { Mirror(self, children: ["broker": description]) }

        public static func == (a: Options, b: Options) -> Bool {
            a.host == b.host && a.port == b.port && a.user == b.user && a.password == b.password && a.tls == b.tls
                && a.tlsCA == b.tlsCA && a.clientID == b.clientID && a.protocolVersion == b.protocolVersion
                && a.keepAliveSeconds == b.keepAliveSeconds && a.will?.topic == b.will?.topic
                && a.will?.payload == b.will?.payload
        }
    }

    /// Where the connection is, for logs, /api/health and the CLI.
    public struct Status: Sendable, Equatable {
        public enum State: String, Sendable { case connecting, connected, refused, unreachable, stopped }
        public var state: State
        /// Why it is not connected ("not authorised: wrong user name or password", "Connection refused").
        public var reason: String?
        public var since90k: Int64
    }

    public let options: Options
    private let logger: Logger
    private let worker = Worker(name: "mqtt")
    private var handle: OpaquePointer?
    private let state: Mutex<Status>
    /// The broker's answer to the last CONNECT, when it refused (set by the connect callback).
    private let refusal = Mutex<String?>(nil)
    /// QoS 1 messages queued in this connection and not yet acknowledged by the broker (the
    /// publish callback): the goodbye waits until there are none. Any thread may publish.
    private let inFlight = Atomic<Int>(0)
    /// Called on the loop thread after each (re)connection: subscribe and republish there.
    private let onConnect: @Sendable (MQTTConnection) -> Void
    /// Called on the loop thread for each message to a subscribed topic.
    private let onMessage: @Sendable (String, [UInt8]) -> Void
    /// Called on the goodbye path, connected, before the disconnect (the `offline` message).
    private let onGoodbye: @Sendable (MQTTConnection) -> Void

    public init(
        options: Options, logger: Logger, onConnect: @escaping @Sendable (MQTTConnection) -> Void = { _ in },
        onMessage: @escaping @Sendable (String, [UInt8]) -> Void = { _, _ in },
        onGoodbye: @escaping @Sendable (MQTTConnection) -> Void = { _ in }
    ) {
        self.options = options
        self.logger = logger
        self.onConnect = onConnect
        self.onMessage = onMessage
        self.onGoodbye = onGoodbye
        state = Mutex(Status(state: .connecting, reason: nil, since90k: Time90k.now()))
    }

    public var status: Status { state.withLock { $0 } }

    /// Starts the loop thread. Throws only for what no retry can mend (a bad option).
    public func start() throws {
        mosquitto_lib_init()
        guard let m = mosquitto_new(options.clientID, true, Unmanaged.passUnretained(self).toOpaque()) else {
            throw MQTTError("cannot make an MQTT client (out of memory?)")
        }
        handle = m
        // Other threads publish: libmosquitto then only queues there and wakes the loop thread,
        // which does all the socket (and TLS) work (mosquitto.h, "Threads").
        try check(mosquitto_threaded_set(m, true), "threads")
        try check(
            mosquitto_int_option(m, MOSQ_OPT_PROTOCOL_VERSION, Int32(options.protocolVersion == 5 ? 5 : 4)),
            "protocol version")
        if options.user != nil || options.password != nil {
            try check(mosquitto_username_pw_set(m, options.user ?? "", options.password), "user name and password")
        }
        if let will = options.will {
            let bytes = Array(will.payload.utf8)
            try check(mosquitto_will_set(m, will.topic, Int32(bytes.count), bytes, 1, true), "last will")
        }
        if options.tls {
            if let ca = options.tlsCA {
                guard FileManager.default.isReadableFile(atPath: ca) else {
                    throw MQTTError("mqtt.tls_ca: cannot read \(ca)")
                }
                try check(mosquitto_tls_set(m, ca, nil, nil, nil, nil), "TLS CA file \(ca)")
            } else {
                try check(mosquitto_tls_set(m, nil, "/etc/ssl/certs", nil, nil, nil), "the system's CA store")
            }
        }
        mosquitto_connect_callback_set(m) { _, obj, rc in
            guard let obj else { return }
            Unmanaged<MQTTConnection>.fromOpaque(obj).takeUnretainedValue().connected(rc)
        }
        mosquitto_publish_callback_set(m) { _, obj, mid in
            guard let obj else { return }
            Unmanaged<MQTTConnection>.fromOpaque(obj).takeUnretainedValue().acknowledged()
        }
        mosquitto_message_callback_set(m) { _, obj, message in
            // A retained command would be applied again at every reconnection: commands are live only.
            guard let obj, let message, !message.pointee.retain, let topic = message.pointee.topic else { return }
            let count = Int(max(0, message.pointee.payloadlen))
            let payload: [UInt8] =
                count == 0 || message.pointee.payload == nil
                ? [] : [UInt8](UnsafeRawBufferPointer(start: message.pointee.payload, count: count))
            Unmanaged<MQTTConnection>.fromOpaque(obj).takeUnretainedValue().onMessage(String(cString: topic), payload)
        }
        worker.start { [self] in
            guard let m = handle else { return }
            loop(m)
        }
    }

    /// Says goodbye (`onGoodbye`, then DISCONNECT, so the broker does not publish the will) and
    /// ends the loop thread.
    public func stop() {
        worker.stop()
        if let m = handle {
            mosquitto_destroy(m)
            handle = nil
        }
        set(.stopped, nil)
    }

    /// Publishes now if connected (QoS 1: the broker acknowledges); false if not connected.
    @discardableResult
    public func publish(_ topic: String, _ payload: [UInt8], retain: Bool = false) -> Bool {
        guard let m = handle, status.state == .connected else { return false }
        // Counted before the call: the acknowledgement may come (on the loop thread) before it returns.
        inFlight.add(1, ordering: .relaxed)
        let rc = payload.withUnsafeBytes { p in
            mosquitto_publish(m, nil, topic, Int32(p.count), p.baseAddress, 1, retain)
        }
        guard rc == Int32(MOSQ_ERR_SUCCESS.rawValue) else {
            inFlight.subtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    @discardableResult
    public func publish(_ topic: String, _ text: String, retain: Bool = false) -> Bool {
        publish(topic, Array(text.utf8), retain: retain)
    }

    /// Subscribes (from `onConnect`: a clean session forgets subscriptions on reconnect).
    public func subscribe(_ filter: String) {
        guard let m = handle else { return }
        let rc = mosquitto_subscribe(m, nil, filter, 1)
        if rc != Int32(MOSQ_ERR_SUCCESS.rawValue) {
            logger.warning("mqtt: cannot subscribe to \(filter): \(String(cString: mosquitto_strerror(rc)))")
        }
    }

    // MARK: the loop thread

    private func loop(_ m: OpaquePointer) {
        var delay = 1.0
        var first = true
        while !worker.isStopping {
            // A retry keeps saying why the last try failed (refused, unreachable) until it succeeds.
            if first { set(.connecting, nil) }
            refusal.withLock { $0 = nil }
            var rc =
                first
                ? mosquitto_connect_async(m, options.host, Int32(options.port), Int32(options.keepAliveSeconds))
                : mosquitto_reconnect_async(m)
            first = false
            var failure = errno
            if rc == Int32(MOSQ_ERR_SUCCESS.rawValue) {
                while !worker.isStopping {
                    rc = mosquitto_loop(m, 200, 1)
                    if rc != Int32(MOSQ_ERR_SUCCESS.rawValue) {
                        failure = errno
                        break
                    }
                    if status.state == .connected { delay = 1 }
                }
            }
            if worker.isStopping {
                goodbye(m)
                return
            }
            let errnoText = String(cString: strerror(failure))
            if let refused = refusal.withLock({ $0 }) {
                set(.refused, refused)
            } else {
                let why = rc == Int32(MOSQ_ERR_ERRNO.rawValue) ? errnoText : String(cString: mosquitto_strerror(rc))
                set(.unreachable, why)
            }
            guard worker.wait(seconds: delay) else { break }
            delay = min(delay * 2, 30)
        }
        goodbye(m)
    }

    /// Connected: the `offline` the bridge owes, a DISCONNECT, and the loop run until both are out.
    private func goodbye(_ m: OpaquePointer) {
        guard status.state == .connected else { return }
        onGoodbye(self)
        // Until the broker has acknowledged the last message (at most three seconds), then
        // DISCONNECT with a second of its own. Closing while the broker still owes a PUBACK makes
        // mosquitto 2.0 (before 2.0.22) fail that PUBACK, call it "out of memory" and publish the
        // will (CI, under load: mosquitto issue #3253).
        let flushBy = Date(timeIntervalSinceNow: 3)
        while inFlight.load(ordering: .relaxed) > 0, Date() < flushBy,
            mosquitto_loop(m, 50, 1) == Int32(MOSQ_ERR_SUCCESS.rawValue)
        {}
        if inFlight.load(ordering: .relaxed) > 0 {
            logger.warning("mqtt: stopping before the broker acknowledged every message")
        }
        // Threaded mode only queues the DISCONNECT: the loop sends it (and libmosquitto closes).
        mosquitto_disconnect(m)
        let closeBy = Date(timeIntervalSinceNow: 1)
        while Date() < closeBy, mosquitto_loop(m, 50, 1) == Int32(MOSQ_ERR_SUCCESS.rawValue) {}
        set(.stopped, nil)
    }

    /// One message acknowledged; never below zero (a message of an earlier connection that
    /// libmosquitto sent again).
    private func acknowledged() {
        var n = inFlight.load(ordering: .relaxed)
        while n > 0 {
            let (done, now) = inFlight.compareExchange(expected: n, desired: n - 1, ordering: .relaxed)
            if done { return }
            n = now
        }
    }

    private func connected(_ rc: Int32) {
        guard rc == 0 else {
            let why =
                options.protocolVersion == 5
                ? String(cString: mosquitto_reason_string(rc)) : String(cString: mosquitto_connack_string(rc))
            // MQTT 3.1.1's 4 and 5, MQTT 5's 134 and 135: the user name or password.
            let credentials = [4, 5, 134, 135].contains(rc) ? " (check mqtt.user and mqtt.password)" : ""
            refusal.withLock { $0 = "the broker refused the connection: \(why)\(credentials)" }
            return
        }
        // A clean session: what was in flight on the last connection is not acknowledged now.
        inFlight.store(0, ordering: .relaxed)
        set(.connected, nil)
        logger.notice("mqtt: connected to \(options.host):\(options.port)")
        onConnect(self)
    }

    private func set(_ s: Status.State, _ reason: String?) {
        let changed = state.withLock { st -> Bool in
            guard st.state != s || st.reason != reason else { return false }
            st = Status(state: s, reason: reason, since90k: Time90k.now())
            return true
        }
        if changed, s == .refused || s == .unreachable {
            logger.warning("mqtt: \(s.rawValue): \(reason ?? "")")
        }
    }

    private func check(_ rc: Int32, _ what: String) throws {
        guard rc == Int32(MOSQ_ERR_SUCCESS.rawValue) else {
            throw MQTTError("mqtt: \(what): \(String(cString: mosquitto_strerror(rc)))")
        }
    }
}

/// An MQTT setting that cannot work, in one line.
public struct MQTTError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
