import Foundation

/// A simulated ONVIF camera for tests: Tests/Support/onvif_camera.py (SOAP device, media and
/// PullPoint event services, WS-Discovery) in front of RTSP streams, optionally inside a
/// network namespace the test made.
public final class ONVIFCameraFixture: @unchecked Sendable {
    public struct Options: Sendable {
        public var user = "admin"
        public var password = "secret"
        public var mainURI: String
        public var mainSize = "640x360"
        public var subURI: String?
        public var subSize = "320x180"
        /// Seconds the camera's clock is ahead (negative: behind).
        public var clockOffset: Double = 0
        /// The address served (and announced with `discovery`).
        public var address = "127.0.0.1"
        public var discovery = false
        /// The device's WS-Discovery endpoint id (random when nil).
        public var uuid: String?
        /// A PTZ service on the main profile, and whether it honours a move's Timeout.
        public var ptz: PTZ?
        /// Run inside this network namespace (`ip netns exec`).
        public var namespace: String?
        public init(mainURI: String) { self.mainURI = mainURI }
    }

    public enum PTZ: String, Sendable {
        /// Stops a continuous move at its Timeout (as ONVIF says).
        case timeout
        /// Keeps moving until Stop (as some cameras do).
        case ignoresTimeout = "ignores-timeout"
    }

    public let options: Options
    public private(set) var port = 0
    private var process: Process?

    public static var scriptPath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("onvif_camera.py").path
    }

    public init(_ options: Options) throws {
        self.options = options
        var args = [
            Self.scriptPath, "--port", "0", "--address", options.address, "--user", options.user, "--password",
            options.password,
            "--main-uri", options.mainURI, "--main-size", options.mainSize, "--clock-offset",
            String(options.clockOffset),
        ]
        if let sub = options.subURI { args += ["--sub-uri", sub, "--sub-size", options.subSize] }
        if options.discovery { args.append("--discovery") }
        if let uuid = options.uuid { args += ["--uuid", uuid] }
        if let ptz = options.ptz { args += ptz == .timeout ? ["--ptz"] : ["--ptz", "--ptz-ignores-timeout"] }
        let (p, text) = try PythonFixture.start(args, namespace: options.namespace)
        guard let bound = PythonFixture.readyPort(text) else {
            p.terminate()
            p.waitUntilExit()
            throw FixtureError("ONVIF camera fixture did not start: \(text)")
        }
        port = bound
        process = p
    }

    deinit { stop() }

    /// host:port of the device service.
    public var address: String { "\(options.address):\(port)" }
    public var deviceURL: String { "http://\(address)/onvif/device_service" }

    /// The camera reports motion on (or off) now, to every subscription.
    public func motion(_ on: Bool) throws { try post("/sim/motion", on ? "true" : "false") }

    /// How a camera says it does not know a subscription (any more).
    public enum UnknownSubscriptionFault: String, Sendable {
        /// Code Sender, Subcode wsrf-rw:ResourceUnknownFault.
        case subcode
        /// Code Receiver, no Subcode, a WS-BaseFaults wsrf-r:ResourceUnknownFault in Detail.
        case detail
        /// As `detail`, the fault element in the wsrf-r namespace by default (no prefix).
        case detailUnprefixed = "detail-unprefixed"
    }

    /// The camera forgets every subscription (as after a reboot or when it runs out of them);
    /// their addresses then answer `fault`.
    public func dropSubscriptions(fault: UnknownSubscriptionFault = .subcode) throws {
        try post("/sim/drop-subscriptions", fault.rawValue)
    }

    /// Where the PTZ camera points (pan, tilt -1…1, zoom 0…1), whether it is moving, and how
    /// many ContinuousMoves and Stops it has been sent.
    public struct PTZState: Decodable, Sendable {
        public var pan, tilt, zoom: Double
        public var moving: Bool
        public var moves, stops: Int
        /// The last ContinuousMove's Timeout, in seconds (nil: it had none).
        public var lastTimeout: Double?
        enum CodingKeys: String, CodingKey {
            case pan, tilt, zoom, moving, moves, stops
            case lastTimeout = "last_timeout"
        }
    }

    public func ptzState() throws -> PTZState {
        let r = try runProcess("/usr/bin/curl", ["-s", "-f", "-m", "5", "http://\(address)/sim/ptz"])
        guard r.status == 0 else { throw FixtureError("/sim/ptz: curl exit \(r.status) \(r.stderr)") }
        return try JSONDecoder().decode(PTZState.self, from: Data(r.stdout.utf8))
    }

    /// Subscriptions the camera has made so far, and those still active.
    public func subscriptionCounts() throws -> (created: Int, active: Int) {
        var args = ["-s", "-f", "-m", "5", "http://\(address)/sim/stats"]
        var exe = "/usr/bin/curl"
        if let ns = options.namespace {
            args = ["netns", "exec", ns, exe] + args
            exe = "/usr/sbin/ip"
        }
        let r = try runProcess(exe, args)
        guard r.status == 0, let o = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Int],
            let created = o["subscriptions_created"], let active = o["subscriptions_active"]
        else {
            throw FixtureError("/sim/stats: curl exit \(r.status) \(r.stdout)\(r.stderr)")
        }
        return (created, active)
    }

    private func post(_ path: String, _ body: String) throws {
        var args = ["-s", "-f", "-m", "5", "-X", "POST", "--data-binary", body, "http://\(address)\(path)"]
        var exe = "/usr/bin/curl"
        if let ns = options.namespace {
            args = ["netns", "exec", ns, exe] + args
            exe = "/usr/sbin/ip"
        }
        let r = try runProcess(exe, args)
        guard r.status == 0 else { throw FixtureError("\(path): curl exit \(r.status) \(r.stderr)") }
    }

    public func stop() {
        guard let p = process else { return }
        process = nil
        PythonFixture.stop(p)
    }
}
