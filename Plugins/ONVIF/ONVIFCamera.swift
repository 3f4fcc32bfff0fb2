import Foundation
import ONVIFAPI
import PluginSupport

/// An ONVIF camera: each live source is asked of the camera (clock, services, profiles,
/// stream URI — a camera that rebooted may hand out new URIs), recorded through the NVR's RTSP
/// client with the camera's credentials added; its own events come from ONVIFEventWatcher.
final class ONVIFCamera: URLCamera, @unchecked Sendable {
    // @unchecked Sendable: the mutable state is behind `lock`; the rest is immutable or thread-safe.
    let config: ONVIFConfig
    private let host: PluginHostCallbacks
    let client: ONVIFClient
    private var watcher: ONVIFEventWatcher?
    private let lock = NSLock()
    private var info: ONVIFClient.DeviceInformation?
    private var profiles: [ONVIFClient.MediaProfile] = []
    private var chosen: (main: String, sub: String?)?
    private var snapshotURI: String?
    private var lastError: String?
    private var stopped = false
    /// The PTZ service found by the last PTZ request (ONVIFCamera+PTZ), kept until a call fails.
    private var ptzLink: ONVIFPTZLink?

    /// The PTZ service and what it can do, found once and kept; forgotten when a call fails
    /// (a camera that rebooted may move its services).
    func ptzLink(_ find: () throws -> ONVIFPTZLink) throws -> ONVIFPTZLink {
        lock.lock()
        let known = ptzLink
        lock.unlock()
        if let known { return known }
        let found = try find()
        lock.lock()
        ptzLink = found
        lock.unlock()
        return found
    }

    func forgetPTZLink() {
        lock.lock()
        ptzLink = nil
        lock.unlock()
    }

    init(configJSON: String, host: PluginHostCallbacks) throws {
        config = try ONVIFConfig(json: configJSON)
        self.host = host
        client = ONVIFClient(
            deviceURL: config.deviceURL, user: config.user, password: config.password, timeout: config.timeout)
    }

    /// The event subscription starts with the first live source, not in `create`: `camera
    /// add`/`set` create an instance only to check the options, and must not take one of the
    /// camera's few subscriptions (or wait on the camera) to do so.
    private func startEvents() {
        guard config.events else { return }
        lock.lock()
        defer { lock.unlock() }
        guard watcher == nil, !stopped else { return }
        let w = ONVIFEventWatcher(client: client, config: config, host: host)
        watcher = w
        w.start()
    }

    func stop() {
        lock.lock()
        stopped = true
        let w = watcher
        lock.unlock()
        w?.stop()
    }

    func liveSource() throws -> String { try liveSource(substream: false) }

    func liveSource(substream: Bool) throws -> String {
        startEvents()
        do {
            try syncClock()
            let services = try client.services()
            let profiles = try client.profiles(media: services.media)
            let (main, sub) = try choose(profiles)
            lock.lock()
            let known = info != nil
            lock.unlock()
            if !known, let i = try? client.deviceInformation() {
                lock.lock()
                info = i
                lock.unlock()
            }
            let snapshot = substream ? nil : try? client.snapshotURI(media: services.media, profile: main.token)
            lock.lock()
            self.profiles = profiles
            chosen = (main.token, sub?.token)
            if let snapshot { snapshotURI = snapshot }
            lastError = nil
            lock.unlock()
            guard let profile = substream ? sub : main else {
                throw PluginConfigError(
                    config.noSubstream
                        ? "the sub-stream is off (sub_profile=none)"
                        : "the camera has no second profile for a sub-stream (profiles: \(profiles.map(\.token).joined(separator: ", ")))"
                )
            }
            let uri = try client.streamURI(media: services.media, profile: profile.token)
            return jsonText([
                "url": try withCredentials(uri),
                "format": "rtsp",
                "client": config.client,
                "options": ["rtsp_transport": config.transport, "timeout": String(Int(config.timeout) * 1_000_000)],
            ])
        } catch {
            lock.lock()
            lastError = "\(error)"
            lock.unlock()
            throw error
        }
    }

    /// The main stream: the profile named, else the largest picture. The sub-stream: the
    /// profile named, else the smallest picture smaller than the main one.
    func choose(_ profiles: [ONVIFClient.MediaProfile]) throws -> (ONVIFClient.MediaProfile, ONVIFClient.MediaProfile?)
    {
        let names = profiles.map(\.token).joined(separator: ", ")
        guard let largest = profiles.max(by: { $0.pixels < $1.pixels }) else {
            throw ONVIFError(.refused, "the camera has no media profiles")
        }
        var main = largest
        if let want = config.mainProfile {
            guard let p = profiles.first(where: { $0.token == want }) else {
                throw PluginConfigError("the camera has no profile '\(want)' (it has: \(names))")
            }
            main = p
        }
        if config.noSubstream { return (main, nil) }
        if let want = config.subProfile {
            guard let p = profiles.first(where: { $0.token == want }) else {
                throw PluginConfigError("the camera has no profile '\(want)' (it has: \(names))")
            }
            return (main, p)
        }
        let smaller = profiles.filter { $0.token != main.token && $0.pixels < main.pixels }
        return (main, smaller.min(by: { $0.pixels < $1.pixels }))
    }

    /// The camera's RTSP URI with the user and password in it (cameras hand it out without).
    func withCredentials(_ uri: String) throws -> String {
        guard var u = URLComponents(string: uri), let scheme = u.scheme?.lowercased(),
            ["rtsp", "rtsps"].contains(scheme),
            u.host?.isEmpty == false
        else {
            throw ONVIFError(.malformed, "the camera's stream URI is not an rtsp:// URL: \(uri.prefix(200))")
        }
        // Only for the camera itself: a URI naming another host must not be handed our password.
        if u.user == nil && !config.user.isEmpty
            && u.host?.lowercased() == URLComponents(string: config.deviceURL)?.host?.lowercased()
        {
            u.user = config.user
            u.password = config.password
        }
        guard let s = u.string else { throw ONVIFError(.malformed, "cannot add credentials to \(uri.prefix(200))") }
        return s
    }

    func statusJSON() -> String {
        lock.lock()
        let info = self.info
        let profiles = self.profiles
        let chosen = self.chosen
        let snapshot = snapshotURI
        let lastError = self.lastError
        let watcher = self.watcher
        lock.unlock()
        var out: [String: Any] = [
            "device_service": config.deviceURL, "clock_offset_seconds": (client.clockOffset * 10).rounded() / 10,
        ]
        var summary: [String] = []
        if let info {
            out["manufacturer"] = info.manufacturer
            out["model"] = info.model
            out["firmware"] = info.firmware
            out["serial"] = info.serial
            summary.append("\(info.manufacturer) \(info.model) \(info.firmware)".trimmingCharacters(in: .whitespaces))
        }
        if !profiles.isEmpty {
            out["profiles"] = profiles.map {
                ["token": $0.token, "name": $0.name, "encoding": $0.encoding, "width": $0.width, "height": $0.height]
            }
        }
        if let chosen {
            out["main_profile"] = chosen.main
            if let s = chosen.sub { out["sub_profile"] = s }
        }
        if let snapshot { out["snapshot_uri"] = Self.withoutSecrets(snapshot) }
        if abs(client.clockOffset) >= 2 { summary.append("camera clock \(Self.offsetText(client.clockOffset))") }
        if let w = watcher {
            let e = w.status
            out["events"] = e.json
            summary.append("events: \(e.state)")
        }
        if let lastError { out["last_error"] = lastError }
        out["summary"] = summary.joined(separator: ", ")
        return jsonText(out)
    }

    /// WS-Discovery: the ONVIF cameras on this machine's networks (nvr_plugin.h, discover).
    static func discover(seconds: Double) throws -> String {
        let found: [[String: Any]] = try WSDiscovery.probe(seconds: min(max(seconds, 0.2), 30)).compactMap { m in
            guard let address = m.address else { return nil }
            var o: [String: Any] = [
                "address": address, "id": m.endpoint, "options": ["address": address], "needs": ["user", "password"],
            ]
            if let name = m.scope("name") { o["name"] = name }
            if let model = m.scope("hardware") { o["model"] = model }
            return o
        }
        return jsonText(["found": found])
    }

    /// The camera's clock for the digests. A camera that will not tell it (no UTCDateTime, a
    /// 401 to the unauthenticated call) is used with the offset known so far (none at first):
    /// if its digests are then refused, the next call says so.
    private func syncClock() { _ = try? client.syncClock() }

    /// A camera-given URL as status may show it: no user, password or query (some cameras put
    /// `usr=…&pwd=…` in their snapshot URI).
    static func withoutSecrets(_ url: String) -> String {
        guard var u = URLComponents(string: url) else { return "(not a URL)" }
        u.user = nil
        u.password = nil
        u.query = nil
        return String((u.string ?? "(not a URL)").prefix(300))
    }

    static func offsetText(_ s: Double) -> String {
        let a = Int(abs(s).rounded())
        let text = a >= 3600 ? "\(a / 3600) h \(a % 3600 / 60) min" : a >= 60 ? "\(a / 60) min \(a % 60) s" : "\(a) s"
        return "\(text) \(s > 0 ? "ahead" : "behind")"
    }
}
