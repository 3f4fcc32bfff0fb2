import CNVRPlugin
import Foundation
import Insta360API
import PluginSupport

/// One Insta360 camera: watches its state over OSC, gives the host an RTMP listener for live
/// video (OSC has no preview stream), starts camera-side capture on NVR events when asked to,
/// and lists and reads its card.
final class Insta360Camera: CardCamera, URLCamera, @unchecked Sendable {
    // @unchecked Sendable: mutable state is guarded by `lock`; `config`, `osc` and `host` are
    // immutable. The ABI lets the host call in from any thread.

    let config: Insta360Config
    let osc: OSCClient
    private let host: PluginHostCallbacks
    let lock = NSCondition()
    private var stopping = false
    private var watcher: Thread?
    private var worker: Thread?

    // What the camera last said.
    private var info: (model: String, serial: String, firmware: String)?
    private var state: OSCState?
    private var options: OSCOptions?
    private var reachable: Bool?
    private var lastError: String?
    /// The model refused a vendor option (invalidParameterName): ask only the standard ones.
    private var vendorOptionsRefused = false
    /// The options the clock is read from (the vendor one alone once the camera refused the standard).
    var clockOptionNames = OSCOptions.clock
    private var stateChanges = 0

    // Camera-side capture started by NVR events.
    private var captureWanted = false
    private var captureUntil = Date.distantPast
    private var capturing = false
    private var captureError: String?
    private var lastCaptureFiles: [String] = []
    private var captures = 0

    /// Durations read from card files' headers, by path and size (card files do not change).
    var durations: [String: Double] = [:]

    init(configJSON: String, host: PluginHostCallbacks) throws {
        config = try Insta360Config(json: configJSON)
        osc = OSCClient(baseURL: config.baseURL, timeout: config.httpTimeout, pollSeconds: config.commandPollSeconds)
        self.host = host
    }

    /// Stops the threads and any capture the NVR started. No host callback runs after this
    /// returns (the host frees its callbacks right after destroy); a thread still inside an
    /// HTTP request finishes it without reporting.
    func stop() {
        lock.lock()
        let wasCapturing = capturing && !stopping
        stopping = true
        lock.broadcast()
        lock.unlock()
        if wasCapturing { _ = try? osc.execute("camera.stopCapture", wait: config.httpTimeout * 2) }
    }

    /// Calls the host unless stopping, holding the lock so stop() cannot slip in between.
    func report(_ f: (PluginHostCallbacks) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        if !stopping { f(host) }
    }

    private var isStopping: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopping
    }

    private func note(error: String?) {
        lock.lock()
        let was = reachable
        reachable = error == nil
        if let error { lastError = error }
        lock.unlock()
        if let error, was != false { report { $0.log(NVR_LOG_WARNING, error) } }
        if error == nil, was == false { report { $0.log(NVR_LOG_INFO, "camera reachable again") } }
    }

    // MARK: state watching

    /// Starts the state watcher once (not in create: `nvr camera add` only validates).
    func ensureWatcher() {
        lock.lock()
        defer { lock.unlock() }
        guard watcher == nil, !stopping else { return }
        let t = Thread { [weak self] in self?.watch() }
        t.name = "insta360 state"
        watcher = t
        t.start()
    }

    /// Reads state and options, then waits on /osc/checkForUpdates: a new fingerprint means the
    /// state changed. Options (space left) are re-read at least every 30 s.
    private func watch() {
        var fingerprint: String?
        var optionsRead = Date.distantPast
        while !isStopping {
            do {
                lock.lock()
                let haveInfo = info != nil
                lock.unlock()
                if !haveInfo { try readInfo() }
                if fingerprint == nil || Date().timeIntervalSince(optionsRead) > 30 {
                    fingerprint = try refreshState().fingerprint
                    try refreshOptions()
                    optionsRead = Date()
                }
                let asked = Date()
                let wait = config.updatesWaitSeconds
                let data = try osc.request(
                    "/osc/checkForUpdates", body: ["stateFingerprint": fingerprint ?? "", "waitTimeout": wait],
                    what: "checkForUpdates", timeout: Double(wait))
                let o = try OSC.object(data, from: "checkForUpdates")
                let latest = o["stateFingerprint"] as? String
                note(error: nil)
                if let latest, latest != fingerprint {
                    lock.lock()
                    stateChanges += 1
                    lock.unlock()
                    fingerprint = try refreshState().fingerprint
                    try refreshOptions()
                    optionsRead = Date()
                    continue
                }
                // A camera that answers at once (rather than holding the request) is asked again
                // after its throttle time or our status period.
                if Date().timeIntervalSince(asked) < Double(wait) / 2 {
                    pause(max(OSC.double(o["throttleTimeout"]) ?? 0, config.statusSeconds))  // throttleTimeout: seconds
                }
            } catch {
                note(error: "\(error)")
                fingerprint = nil
                pause(config.statusSeconds)
            }
        }
    }

    private func pause(_ seconds: Double) {
        lock.lock()
        if !stopping { _ = lock.wait(until: Date(timeIntervalSinceNow: min(seconds, 60))) }
        lock.unlock()
    }

    private func readInfo() throws {
        let o = try OSC.object(try osc.request("/osc/info", body: nil, what: "/osc/info"), from: "/osc/info")
        lock.lock()
        info = (
            o["model"] as? String ?? "?", o["serialNumber"] as? String ?? "?", o["firmwareVersion"] as? String ?? "?"
        )
        lock.unlock()
    }

    @discardableResult
    func refreshState() throws -> OSCState {
        let s = try OSCState(json: try osc.request("/osc/state", body: [:], what: "/osc/state"))
        lock.lock()
        state = s
        lock.unlock()
        note(error: nil)
        return s
    }

    /// camera.getOptions with the vendor options too, unless the model refused them once
    /// (invalidParameterName): then the standard ones only, and the status says so.
    @discardableResult
    func refreshOptions() throws -> OSCOptions {
        lock.lock()
        let vendor = !vendorOptionsRefused
        lock.unlock()
        let names = OSCOptions.standard + (vendor ? OSCOptions.vendor : [])
        do {
            let o = OSCOptions(
                results: try osc.execute("camera.getOptions", ["optionNames": names], wait: config.httpTimeout * 2))
            lock.lock()
            options = o
            lock.unlock()
            return o
        } catch let e as OSCError where e.code == "invalidParameterName" && vendor {
            lock.lock()
            vendorOptionsRefused = true
            lock.unlock()
            report {
                $0.log(
                    NVR_LOG_INFO,
                    "camera does not know the vendor options \(OSCOptions.vendor.joined(separator: ", ")) (\(e)); reading the standard ones only"
                )
            }
            return try refreshOptions()
        }
    }

    // MARK: live

    /// The RTMP listener the host opens; the camera (or its app) pushes to it.
    func liveSource() -> String {
        ensureWatcher()
        return jsonText([
            "url": config.listenURL,
            "format": "flv",
            "options": ["listen": "1"],
            "listen": true,
        ])
    }

    // MARK: camera-side capture on NVR events

    /// An NVR event of this camera (nvr_event): a start asks for `capture_on_event_seconds`
    /// of camera-side video from now, extending a capture already running. Returns at once.
    func nvrEvent(json: String) {
        guard config.captureOnEventSeconds > 0,
            let o = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
            o["phase"] as? String == "start"
        else { return }
        lock.lock()
        defer { lock.unlock() }
        guard !stopping else { return }
        captureWanted = true
        captureUntil = max(captureUntil, Date(timeIntervalSinceNow: Double(config.captureOnEventSeconds)))
        if worker == nil {
            let t = Thread { [weak self] in self?.captureLoop() }
            t.name = "insta360 capture"
            worker = t
            t.start()
        }
        lock.broadcast()
    }

    private func captureLoop() {
        while true {
            lock.lock()
            while !stopping && !(captureWanted && !capturing) && !(capturing && Date() >= captureUntil) {
                _ = lock.wait(until: capturing ? captureUntil : Date(timeIntervalSinceNow: 60))
            }
            if stopping {
                lock.unlock()
                return
            }
            let start = !capturing
            captureWanted = false
            lock.unlock()
            if start { startCapture() } else { stopCapture() }
        }
    }

    private func startCapture() {
        do {
            _ = try osc.execute(
                "camera.setOptions", ["options": ["captureMode": "video"]], wait: config.httpTimeout * 2)
            _ = try osc.execute("camera.startCapture", wait: config.httpTimeout * 2)
            lock.lock()
            capturing = true
            captureError = nil
            captures += 1
            let until = captureUntil
            lock.unlock()
            report {
                $0.log(
                    NVR_LOG_INFO,
                    "camera-side capture started for an NVR event (until \(ISO8601DateFormatter().string(from: until)))"
                )
            }
        } catch {
            let message = "camera-side capture could not start: \(error)"
            lock.lock()
            captureError = message
            lock.unlock()
            report { $0.log(NVR_LOG_WARNING, message) }
        }
    }

    private func stopCapture() {
        do {
            let r = try osc.execute("camera.stopCapture", wait: 60)
            let files = (r["fileUrls"] as? [String]) ?? (r["fileUrl"] as? String).map { [$0] } ?? []
            lock.lock()
            capturing = false
            lastCaptureFiles = files
            lock.unlock()
            report {
                $0.log(
                    NVR_LOG_INFO,
                    "camera-side capture stopped: \(files.map { $0.split(separator: "/").last.map(String.init) ?? $0 }.joined(separator: ", "))"
                )
            }
        } catch {
            let message = "camera-side capture could not stop: \(error)"
            // Assume it still runs: try again in a few seconds.
            lock.lock()
            captureError = message
            captureUntil = Date(timeIntervalSinceNow: 5)
            lock.unlock()
            report { $0.log(NVR_LOG_WARNING, message) }
        }
    }

    // MARK: status

    func statusJSON() -> String {
        ensureWatcher()
        lock.lock()
        let s = state
        let o = options
        let info = self.info
        let reachable = self.reachable
        let lastError = self.lastError
        let capturing = self.capturing
        let captureError = self.captureError
        let files = lastCaptureFiles
        let captures = self.captures
        let refused = vendorOptionsRefused
        let changes = stateChanges
        lock.unlock()
        var out: [String: Any] = ["rtmp": config.publicURL, "state_changes": changes]
        var summary: [String] = []
        if let info {
            out["model"] = info.model
            out["serial"] = info.serial
            out["firmware"] = info.firmware
        }
        if let reachable { out["reachable"] = reachable }
        if let lastError { out["last_error"] = lastError }
        if let s {
            out["fingerprint"] = s.fingerprint
            if let b = s.batteryLevel {
                out["battery_percent"] = Int((b * 100).rounded())
                summary.append("battery \(Int((b * 100).rounded())) %")
            }
            if let c = s.cardText { out["card_state"] = c }
        }
        if let o {
            if let r = o.remainingSpace { out["card_remaining_bytes"] = r }
            if let t = o.totalSpace { out["card_total_bytes"] = t }
            if let c = o.batteryCapacity { out["battery_capacity_mah"] = c }
            if let m = o.captureMode { out["capture_mode"] = m }
        }
        if refused { out["vendor_options"] = "not supported by this model" }
        var card = "card \(s?.cardDescription ?? "?")"
        if let r = o?.remainingSpace {
            card +=
                String(format: " (%.1f GB free", Double(r) / 1e9)
                + (o?.totalSpace.map { String(format: " of %.1f GB)", Double($0) / 1e9) } ?? ")")
        }
        summary.append(card)
        if config.captureOnEventSeconds > 0 {
            out["capture_on_event_seconds"] = config.captureOnEventSeconds
            out["capturing"] = capturing
            out["captures"] = captures
            if !files.isEmpty { out["last_capture_files"] = files }
            if let captureError { out["capture_error"] = captureError }
            if capturing { summary.append("capturing on camera") }
        }
        summary.append("live via \(config.publicURL)")
        if reachable == false { summary.append("unreachable") }
        out["summary"] = summary.joined(separator: ", ")
        return jsonText(out)
    }
}
