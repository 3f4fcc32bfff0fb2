import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// An Insta360 camera's OSC server as PROTOCOLS.md describes it: /osc/info, /osc/state (with a
/// fingerprint that changes with the state), /osc/checkForUpdates (held until a change or the
/// wait ends), commands through execute + status (stopCapture and takePicture go inProgress →
/// done), camera.listFiles with paging, and card files (real MP4s) served with Range. Checks
/// what a camera would: the required headers, one command at a time. Switches for tests:
/// battery, card state, canned failures (HTTP status, OSC error, hang), disabled commands.
public final class Insta360Simulator: @unchecked Sendable {
    // @unchecked Sendable: mutable state is guarded by `lock`.
    public struct Options: Sendable {
        public var httpPort = 8081
        /// The address the OSC server listens on (192.168.42.1 plays the camera's access point).
        public var httpAddress = "127.0.0.1"
        public var cardRoot: String
        /// The camera's time zone offset in seconds (+08:00 by default) and its clock's error.
        public var zoneSeconds = 8 * 3600
        public var clockDrift: Double = 0
        /// Longest hold of a checkForUpdates request.
        public var maxUpdatesHold: Double = 3
        /// How long stopCapture and takePicture stay in progress.
        public var commandSeconds: Double = 1
        /// Options camera.getOptions refuses with invalidParameterName (a model without them).
        public var unknownOptions: Set<String> = []
        public var width = 640, height = 360, fps = 25
        public var logger = Logger(label: "camsim")
        public init(cardRoot: String) { self.cardRoot = cardRoot }
    }

    /// A canned bad answer for the next `count` requests of a command ("camera.listFiles") or
    /// endpoint ("/osc/state").
    public enum Failure: Sendable {
        case status(Int)
        case oscError(String)
        case hang(Double)
        case malformedJSON
    }

    public struct Stats: Sendable {
        public var requests: [String: Int] = [:]
        public var commands: [String: Int] = [:]
        public var listFilesPositions: [Int] = []
        public var listFilesPageSizes: [Int] = []
        /// Requests without Content-Type/Accept/X-XSRF-Protected as OSC requires.
        public var headerViolations = 0
        /// Most /osc/commands/* requests in flight at once (a camera takes one).
        public var maxConcurrentCommands = 0
        public var cardBytesServed: Int64 = 0
        public var cardRequests = 0
    }

    /// One file on the card.
    public struct CardFile: Sendable {
        public var name: String
        public var end: Date
        public var size: Int64
        public var width: Int, height: Int
        public var isVideo: Bool
    }

    public let options: Options
    let folder: String
    private let lock = NSLock()
    private var battery = 0.87
    private var cardState = "pass"
    private var fingerprint = 1
    private var captureMode = "image"
    private var captureStart: Date?
    private var files: [CardFile] = []
    private var sequence = 0
    private var commandsInFlight = 0
    private var pending: [String: [String: Any]] = [:]  // command id → final answer (nil results while running)
    private var nextCommandID = 1
    private var failures: [String: (Failure, Int)] = [:]
    private var disabled: Set<String> = []
    private var counters = Stats()
    private var port = 0
    private var group: ServiceGroup?

    public init(_ options: Options) throws {
        self.options = options
        folder = options.cardRoot + "/DCIM/Camera01"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    // MARK: switches

    public func setBattery(_ level: Double) {
        lock.withLock {
            battery = level
            fingerprint += 1
        }
    }
    public func setCardState(_ s: String) {
        lock.withLock {
            cardState = s
            fingerprint += 1
        }
    }
    public func fail(_ name: String, with failure: Failure, count: Int) {
        lock.withLock { failures[name] = (failure, count) }
    }
    public func disable(_ command: String, _ on: Bool = true) {
        lock.withLock { if on { disabled.insert(command) } else { disabled.remove(command) } }
    }
    public var stats: Stats { lock.withLock { counters } }
    public var isCapturing: Bool { lock.withLock { captureStart != nil } }
    public var cardFiles: [CardFile] { lock.withLock { files } }
    public var baseURL: String { "http://127.0.0.1:\(lock.withLock { port })" }

    /// Records a video onto the card that ended at `end` and lasted `seconds` (a real MP4 made by
    /// ffmpeg): a 360 pair `_00_`/`_10_` `.insv` by default, or one single-lens `.mp4`.
    /// Returns the names.
    @discardableResult
    public func addVideo(end: Date, seconds: Double, pair: Bool = true) throws -> [String] {
        let start = end.addingTimeInterval(-seconds)
        let n = lock.withLock {
            sequence += 1
            return sequence
        }
        let stamp = localStamp(start, pattern: "yyyyMMdd_HHmmss")
        let names =
            pair
            ? [
                "VID_\(stamp)_00_\(String(format: "%03d", n)).insv",
                "VID_\(stamp)_10_\(String(format: "%03d", n)).insv",
            ]
            : ["VID_\(stamp)_00_\(String(format: "%03d", n)).mp4"]
        let first = folder + "/" + names[0]
        try encode(seconds: seconds, to: first)
        for extra in names.dropFirst() { try FileManager.default.copyItem(atPath: first, toPath: folder + "/" + extra) }
        let added = names.map { name -> CardFile in
            let size = (try? FileManager.default.attributesOfItem(atPath: folder + "/" + name)[.size] as? Int64) ?? 0
            return CardFile(
                name: name, end: end, size: size ?? 0, width: options.width, height: options.height, isVideo: true)
        }
        lock.withLock {
            files += added
            fingerprint += 1
        }
        return names
    }

    /// Test-pattern H.264 + AAC in an MP4 container (moov at the end, as a camera writes it).
    private func encode(seconds: Double, to path: String) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        p.arguments =
            ["-hide_banner", "-loglevel", "error", "-nostdin", "-y"]
            + Insta360Encoding.arguments(
                width: options.width, height: options.height, fps: options.fps, seconds: seconds) + ["-f", "mp4", path]
        p.standardInput = FileHandle.nullDevice
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw CocoaError(.fileWriteUnknown) }
    }

    private func localStamp(_ d: Date, pattern: String) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(secondsFromGMT: options.zoneSeconds)
        f.dateFormat = pattern
        return f.string(from: d.addingTimeInterval(options.clockDrift))
    }

    /// OSC's "YYYY:MM:DD HH:MM:SS+HH:MM" on the camera's (drifting) clock.
    func dateTimeZone(_ d: Date) -> String {
        let z = options.zoneSeconds
        return localStamp(d, pattern: "yyyy:MM:dd HH:mm:ss")
            + String(format: "%@%02d:%02d", z < 0 ? "-" : "+", abs(z) / 3600, abs(z) % 3600 / 60)
    }

    // MARK: running

    public func run(onBound: @escaping @Sendable (Int) -> Void = { _ in }) async throws {
        let router = Router(context: SimContext.self)
        routes(router)
        let logger = options.logger
        let app = Application(
            router: router,
            configuration: .init(
                address: .hostname(options.httpAddress, port: options.httpPort), serverName: "Insta360"),
            onServerRunning: { [self] ch in
                let p = ch.localAddress?.port ?? 0
                lock.withLock { port = p }
                logger.info("camsim insta360: OSC on \(ch.localAddress?.description ?? "?"), card \(folder)")
                onBound(p)
            }, logger: logger)
        let g = ServiceGroup(services: [app], gracefulShutdownSignals: [], cancellationSignals: [], logger: logger)
        lock.withLock { group = g }
        try await g.run()
    }

    public func shutdown() async { await lock.withLock { group }?.triggerGracefulShutdown() }

    // MARK: HTTP

    private func json(_ obj: Any, status: HTTPResponse.Status = .ok) -> Response {
        let data =
            (try? JSONSerialization.data(withJSONObject: obj, options: [.sortedKeys, .withoutEscapingSlashes]))
            ?? Data("{}".utf8)
        return Response(
            status: status, headers: [.contentType: "application/json;charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    private func oscError(_ name: String, _ code: String, _ message: String, status: HTTPResponse.Status = .badRequest)
        -> Response
    {
        json(["name": name, "state": "error", "error": ["code": code, "message": message]], status: status)
    }

    /// The canned failure for `name`, if one is due.
    private func dueFailure(_ name: String) -> Failure? {
        lock.withLock {
            guard let (f, n) = failures[name], n > 0 else { return nil }
            failures[name] = n > 1 ? (f, n - 1) : nil
            return f
        }
    }

    private func failureResponse(_ f: Failure, name: String) async throws -> Response {
        switch f {
        case .status(let code): return json(["error": "simulated failure"], status: HTTPResponse.Status(code: code))
        case .oscError(let code): return oscError(name, code, "simulated \(code)")
        case .hang(let seconds):
            try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            return oscError(name, "serverError", "answered late")
        case .malformedJSON:
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: "{\"state\": ")))
        }
    }

    /// An OSC POST endpoint: header check, canned failures, the JSON body decoded.
    private func post(
        _ router: Router<SimContext>, _ path: RouterPath, _ name: String,
        _ body: @escaping @Sendable ([String: Any]) async throws -> Response
    ) {
        router.post(path) { [self] req, _ in
            let h = req.headers
            let ok =
                h[.contentType]?.lowercased().hasPrefix("application/json") == true
                && h[.accept]?.contains("application/json") == true
                && h.first(where: { $0.name.canonicalName == "x-xsrf-protected" })?.value == "1"
            lock.withLock {
                counters.requests[name, default: 0] += 1
                if !ok { counters.headerViolations += 1 }
            }
            guard ok else {
                return oscError(
                    name, "missingHeader", "OSC requests need Content-Type, Accept and X-XSRF-Protected: 1",
                    status: .forbidden)
            }
            let buffer = try await req.body.collect(upTo: 1 << 20)
            let obj = (try? JSONSerialization.jsonObject(with: Data(buffer: buffer))) as? [String: Any] ?? [:]
            if let f = dueFailure(name) { return try await failureResponse(f, name: name) }
            return try await body(obj)
        }
    }

    private func routes(_ router: Router<SimContext>) {
        router.get("/osc/info") { [self] _, _ in
            lock.withLock { counters.requests["/osc/info", default: 0] += 1 }
            if let f = dueFailure("/osc/info") { return try await failureResponse(f, name: "/osc/info") }
            return json([
                "manufacturer": "Arashi Vision", "model": "Insta360 X3", "serialNumber": "IXSE42A7B1C3",
                "firmwareVersion": "v1.0.04",
                "supportUrl": "https://www.insta360.com/support", "endpoints": ["httpPort": 80, "httpUpdatesPort": 80],
                "gps": false, "gyro": true, "uptime": 600,
                "api": [
                    "/osc/info", "/osc/state", "/osc/checkForUpdates",
                    "/osc/commands/execute", "/osc/commands/status",
                ],
                "apiLevel": [2], "_vendorVersion": "1.0",
            ])
        }
        post(router, "/osc/state", "/osc/state") { [self] _ in json(stateDocument()) }
        post(router, "/osc/checkForUpdates", "/osc/checkForUpdates") { [self] o in
            let known = o["stateFingerprint"] as? String ?? ""
            let wait = min((o["waitTimeout"] as? NSNumber)?.doubleValue ?? 0, options.maxUpdatesHold)
            let until = Date(timeIntervalSinceNow: wait)
            while currentFingerprint == known, Date() < until { try await Task.sleep(nanoseconds: 100_000_000) }
            return json(["stateFingerprint": currentFingerprint, "throttleTimeout": 1])
        }
        post(router, "/osc/commands/execute", "execute") { [self] o in
            let name = o["name"] as? String ?? ""
            lock.withLock {
                commandsInFlight += 1
                counters.maxConcurrentCommands = max(counters.maxConcurrentCommands, commandsInFlight)
                counters.commands[name, default: 0] += 1
            }
            defer { lock.withLock { commandsInFlight -= 1 } }
            // Overlapping commands are seen: a slow answer leaves room for a second request.
            try await Task.sleep(nanoseconds: 20_000_000)
            if let f = dueFailure(name) { return try await failureResponse(f, name: name) }
            if lock.withLock({ disabled.contains(name) }) {
                return oscError(name, "disabledCommand", "\(name) is disabled in this mode")
            }
            return try await execute(name, o["parameters"] as? [String: Any] ?? [:])
        }
        post(router, "/osc/commands/status", "status") { [self] o in
            lock.withLock {
                commandsInFlight += 1
                counters.maxConcurrentCommands = max(counters.maxConcurrentCommands, commandsInFlight)
            }
            defer { lock.withLock { commandsInFlight -= 1 } }
            try await Task.sleep(nanoseconds: 20_000_000)
            guard let id = o["id"] as? String, let answer = lock.withLock({ pending[id] }) else {
                return oscError("camera.status", "invalidParameterValue", "unknown command id")
            }
            return json(answer)
        }
        router.get("/DCIM/Camera01/:file") { [self] req, ctx in
            let file = ctx.parameters.get("file") ?? ""
            guard !file.contains("/"), !file.hasPrefix("."), cardFiles.contains(where: { $0.name == file }) else {
                return Response(status: .notFound)
            }
            lock.withLock { counters.cardRequests += 1 }
            return try rangeFileResponse(folder + "/" + file, range: req.headers[.range]) { [self] n in
                lock.withLock { counters.cardBytesServed += Int64(n) }
            }
        }
        router.get("/sim/battery") { [self] req, _ in
            setBattery(req.uri.queryParameters.get("level").flatMap(Double.init) ?? 0.5)
            return json(stateDocument())
        }
        router.get("/sim/stats") { [self] _, _ in
            let s = stats
            return json([
                "requests": s.requests, "commands": s.commands, "header_violations": s.headerViolations,
                "max_concurrent_commands": s.maxConcurrentCommands, "card_bytes_served": s.cardBytesServed,
                "files": cardFiles.map(\.name), "capturing": isCapturing,
            ])
        }
    }

    private var currentFingerprint: String { lock.withLock { "FPR_\(52_900 + fingerprint)" } }

    func stateDocument() -> [String: Any] {
        lock.withLock {
            [
                "fingerprint": "FPR_\(52_900 + fingerprint)",
                "state": [
                    "_cardState": cardState, "batteryLevel": battery,
                    "storageUri": "http://192.168.42.1:80/DCIM/Camera01/",
                    "_captureStatus": captureStart == nil ? "idle" : "recording",
                ],
            ]
        }
    }

    private func entry(_ f: CardFile) -> [String: Any] {
        [
            "name": f.name, "fileUrl": "\(baseURL)/DCIM/Camera01/\(f.name)",
            "_localFileUrl": "/DCIM/Camera01/\(f.name)",
            "size": f.size, "width": f.width, "height": f.height, "dateTimeZone": dateTimeZone(f.end),
            "isProcessed": true,
            "previewUrl": "",
        ]
    }

    // MARK: commands

    private static let knownOptions: Set<String> = [
        "remainingSpace", "totalSpace", "captureMode", "_batteryCapacity", "_dateTime", "dateTimeZone",
    ]

    private func execute(_ name: String, _ p: [String: Any]) async throws -> Response {
        switch name {
        case "camera.getOptions":
            let names = p["optionNames"] as? [String] ?? []
            if let bad = names.first(where: { !Self.knownOptions.contains($0) || options.unknownOptions.contains($0) })
            {
                return oscError(name, "invalidParameterName", "unknown option \(bad)")
            }
            let used = lock.withLock { files.reduce(Int64(0)) { $0 + $1.size } }
            let total: Int64 = 64_000_000_000
            var values: [String: Any] = [
                "remainingSpace": total - 12_300_000_000 - used, "totalSpace": total,
                "captureMode": lock.withLock { captureMode }, "_batteryCapacity": 1800,
                // As Insta360's reference shows it: local time, no zone. The
                // zone is OSC's standard dateTimeZone option's.
                "_dateTime": localStamp(Date(), pattern: "yyyy:MM:dd HH:mm:ss"),
                "dateTimeZone": dateTimeZone(Date()),
            ]
            values = values.filter { names.contains($0.key) }
            return json(["name": name, "state": "done", "results": ["options": values]])
        case "camera.setOptions":
            let opts = p["options"] as? [String: Any] ?? [:]
            for (k, v) in opts {
                guard Self.knownOptions.contains(k), k == "captureMode" else {
                    return oscError(name, "invalidParameterName", "cannot set \(k)")
                }
                guard let mode = v as? String, ["image", "video", "interval"].contains(mode) else {
                    return oscError(name, "invalidParameterValue", "captureMode \(v)")
                }
                lock.withLock {
                    captureMode = mode
                    fingerprint += 1
                }
            }
            return json(["name": name, "state": "done"])
        case "camera.startCapture":
            let (mode, running) = lock.withLock { (captureMode, captureStart != nil) }
            guard mode == "video" else {
                return oscError(name, "disabledCommand", "startCapture needs captureMode video (is \(mode))")
            }
            guard !running else { return oscError(name, "disabledCommand", "already capturing") }
            lock.withLock {
                captureStart = Date()
                fingerprint += 1
            }
            return json(["name": name, "state": "done"])
        case "camera.stopCapture":
            guard let start = lock.withLock({ captureStart }) else {
                return oscError(name, "disabledCommand", "not capturing")
            }
            let id = startCommand(name)
            let end = Date()
            lock.withLock {
                captureStart = nil
                fingerprint += 1
            }
            Task.detached { [self] in
                try? await Task.sleep(nanoseconds: UInt64(options.commandSeconds * 1e9))
                do {
                    let names = try addVideo(end: end, seconds: max(end.timeIntervalSince(start), 0.5))
                    finish(
                        id, name,
                        results: [
                            "fileUrls": names.map { "\(baseURL)/DCIM/Camera01/\($0)" },
                            "_localFileUrls": names.map { "/DCIM/Camera01/\($0)" },
                        ])
                } catch {
                    finishWithError(id, name, "serverError", "could not write the video")
                }
            }
            return json(["name": name, "state": "inProgress", "id": id, "progress": ["completion": 0]])
        case "camera.takePicture":
            let id = startCommand(name)
            Task.detached { [self] in
                try? await Task.sleep(nanoseconds: UInt64(options.commandSeconds * 1e9))
                let n = lock.withLock {
                    sequence += 1
                    return sequence
                }
                let file = "IMG_\(localStamp(Date(), pattern: "yyyyMMdd_HHmmss"))_00_\(String(format: "%03d", n)).insp"
                FileManager.default.createFile(atPath: folder + "/" + file, contents: Data([0xFF, 0xD8, 0xFF, 0xD9]))
                lock.withLock {
                    files.append(
                        CardFile(
                            name: file, end: Date(), size: 4, width: options.width, height: options.height,
                            isVideo: false))
                    fingerprint += 1
                }
                finish(id, name, results: ["fileUrl": "\(baseURL)/DCIM/Camera01/\(file)"])
            }
            return json(["name": name, "state": "inProgress", "id": id, "progress": ["completion": 0]])
        case "camera.listFiles":
            let type = p["fileType"] as? String ?? "all"
            guard ["image", "video", "all"].contains(type) else {
                return oscError(name, "invalidParameterValue", "fileType \(type)")
            }
            guard let count = (p["entryCount"] as? NSNumber)?.intValue, count > 0 else {
                return oscError(name, "missingParameter", "entryCount is required")
            }
            let startPosition = (p["startPosition"] as? NSNumber)?.intValue ?? 0
            lock.withLock {
                counters.listFilesPositions.append(startPosition)
                counters.listFilesPageSizes.append(count)
            }
            let all = cardFiles.filter { type == "all" || ($0.isVideo == (type == "video")) }.sorted {
                $0.end > $1.end || ($0.end == $1.end && $0.name < $1.name)
            }
            let page =
                startPosition < all.count ? Array(all[startPosition..<min(all.count, startPosition + count)]) : []
            return json([
                "name": name, "state": "done", "results": ["entries": page.map(entry), "totalEntries": all.count],
            ])
        case "camera.delete":
            let urls = p["fileUrls"] as? [String] ?? []
            let names = urls.map { $0.split(separator: "/").last.map(String.init) ?? $0 }
            let known = Set(cardFiles.map(\.name))
            guard !urls.isEmpty, names.allSatisfy(known.contains) else {
                return oscError(name, "invalidParameterValue", "no such file")
            }
            for n in names { try? FileManager.default.removeItem(atPath: folder + "/" + n) }
            lock.withLock {
                files.removeAll { names.contains($0.name) }
                fingerprint += 1
            }
            return json(["name": name, "state": "done"])
        default:
            return oscError(name, "unknownCommand", "\(name) is not a command of this camera")
        }
    }

    private func startCommand(_ name: String) -> String {
        lock.withLock {
            let id = String(nextCommandID)
            nextCommandID += 1
            pending[id] = ["name": name, "state": "inProgress", "id": id, "progress": ["completion": 0.5]]
            return id
        }
    }

    private func finish(_ id: String, _ name: String, results: [String: Any]) {
        lock.withLock { pending[id] = ["name": name, "state": "done", "id": id, "results": results] }
    }

    private func finishWithError(_ id: String, _ name: String, _ code: String, _ message: String) {
        lock.withLock {
            pending[id] = ["name": name, "state": "error", "id": id, "error": ["code": code, "message": message]]
        }
    }
}
