import CNVRPlugin
import Foundation
import PluginSupport
import TuyaAPI

/// One Tuya IPC camera: live video from a fresh cloud allocation per connection (or a local
/// RTSP URL), motion and doorbell events from the LAN protocol, and status data points.
final class TuyaCamera: URLCamera, CardLister, @unchecked Sendable {
    // @unchecked Sendable: mutable state is guarded by `lock`; `config`, `cloud`, `lan` and
    // `host` are immutable. The ABI lets the host call in from any thread.
    let config: TuyaConfig
    private let cloud: TuyaCloud?
    private let lan: TuyaLANClient?
    private let host: PluginHostCallbacks
    private let lock = NSCondition()
    private var stopping = false
    private var started = false
    private var dps: [String: JSONScalar] = [:]
    private var cloudStatus: [String: String] = [:]
    private var allocations = 0
    private var cloudError: String?
    private var motionEvents = 0
    /// The LAN client's previous problem line (repeats are logged at debug).
    private var previousLANLine: String?

    init(configJSON: String, host: PluginHostCallbacks) throws {
        config = try TuyaConfig(json: configJSON)
        self.host = host
        if let id = config.clientID, let secret = config.secret {
            cloud = TuyaCloud(TuyaCloud.Config(baseURL: config.cloudHost, clientID: id, secret: secret))
        } else {
            cloud = nil
        }
        if let lanHost = config.lanHost, let key = config.localKey {
            var c = TuyaLANClient.Config(
                host: lanHost, deviceID: config.deviceID, localKey: key, version: config.lanVersion)
            c.port = config.lanPort
            c.heartbeatSeconds = Double(config.heartbeatSeconds)
            lan = TuyaLANClient(c)
        } else {
            lan = nil
        }
    }

    /// Stops the LAN connection and the status poller; no host callback runs after this returns.
    func stop() {
        lock.lock()
        stopping = true
        lock.broadcast()
        lock.unlock()
        lan?.stop()
    }

    private func report(_ f: (PluginHostCallbacks) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        if !stopping { f(host) }
    }

    /// Records `line` as the newest LAN problem; true when it repeats the previous one.
    private func lastLANLine(_ line: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        let repeated = previousLANLine == line
        previousLANLine = line
        return repeated
    }

    /// Starts the LAN client and the cloud status poller once (not in create: `nvr camera add`
    /// only validates).
    private func ensureStarted() {
        lock.lock()
        guard !started, !stopping else {
            lock.unlock()
            return
        }
        started = true
        lock.unlock()
        if let lan {
            // Problems at warning level, but the same line again (a retry every few seconds)
            // only at debug: the log says it once.
            lan.onLog = { [weak self] line, problem in
                guard let self else { return }
                let level = problem ? (self.lastLANLine(line) ? NVR_LOG_DEBUG : NVR_LOG_WARNING) : NVR_LOG_INFO
                self.report { $0.log(level, line) }
            }
            lan.onDataPoints = { [weak self] dps, pushed in self?.dataPoints(dps, pushed: pushed) }
            lan.start()
        }
        if cloud != nil {
            let t = Thread { [weak self] in self?.pollCloud() }
            t.name = "tuya cloud status"
            t.start()
        }
    }

    // MARK: events

    /// Motion (115) and doorbell (136, 154, 185) pushes become pulse events that end after
    /// `quiet_seconds` without another; the state a query returns is not news.
    private func dataPoints(_ new: [String: JSONScalar], pushed: Bool) {
        lock.lock()
        dps.merge(new) { $1 }
        if pushed && new["115"] != nil { motionEvents += 1 }
        lock.unlock()
        guard pushed else { return }
        let now = Int64(Date().timeIntervalSince1970 * 90_000)
        if new["115"] != nil {
            report {
                $0.event(
                    #"{"type":"motion","phase":"pulse","time90k":\#(now),"quiet_seconds":\#(config.quietSeconds)}"#)
            }
        }
        if new["136"] != nil || new["154"] != nil || new["185"] != nil {
            report {
                $0.event(
                    #"{"type":"doorbell","phase":"pulse","time90k":\#(now),"quiet_seconds":\#(config.quietSeconds)}"#)
            }
        }
    }

    // MARK: cloud status

    private func pollCloud() {
        while true {
            lock.lock()
            if stopping {
                lock.unlock()
                return
            }
            lock.unlock()
            do {
                let s = try cloud!.deviceStatus(deviceID: config.deviceID).mapValues { "\($0)" }
                lock.lock()
                cloudStatus = s
                cloudError = nil
                lock.unlock()
            } catch {
                lock.lock()
                cloudError = "\(error)"
                lock.unlock()
            }
            lock.lock()
            if !stopping { _ = lock.wait(until: Date(timeIntervalSinceNow: Double(config.statusSeconds))) }
            lock.unlock()
        }
    }

    // MARK: live

    /// A fresh single-use URL for every (re)connection, or the local RTSP URL when configured.
    func liveSource() throws -> String {
        ensureStarted()
        if let local = config.localRTSPURL { return jsonText(["url": local]) }
        guard let cloud else { throw PluginConfigError("no cloud credentials to allocate a stream") }
        do {
            let url = try cloud.allocateStream(deviceID: config.deviceID, type: config.streamType)
            lock.lock()
            allocations += 1
            cloudError = nil
            lock.unlock()
            return jsonText(["url": url, "format": config.streamType == "hls" ? "hls" : NSNull()])
        } catch {
            lock.lock()
            cloudError = "\(error)"
            lock.unlock()
            throw error
        }
    }

    // MARK: camera-side recordings

    /// Cloud-storage recordings of the last `cloud_timeline_hours`, as card_list media marked
    /// `source: cloud` (shown on the timeline; the NVR does not download them). SD-card
    /// recordings are not listed: they are reachable only through Tuya's closed P2P SDK.
    func cardList() throws -> String {
        ensureStarted()
        guard let cloud, config.cloudTimelineHours > 0 else { return jsonText(["media": [Any]()]) }
        let now = Int64(Date().timeIntervalSince1970)
        let slices = try cloud.cloudTimeline(
            deviceID: config.deviceID, from: now - Int64(config.cloudTimelineHours) * 3600, to: now)
        let media = slices.map { s -> [String: Any] in
            [
                "id": "cloud/\(s.start)", "name": "cloud \(s.start)–\(s.stop)", "start_utc": Double(s.start),
                "duration": Double(s.stop - s.start), "size": 0, "source": "cloud",
            ]
        }
        return jsonText(["media": media])
    }

    // MARK: status

    func statusJSON() -> String {
        ensureStarted()
        lock.lock()
        let dps = self.dps
        let cloudStatus = self.cloudStatus
        let allocations = self.allocations
        let cloudError = self.cloudError
        let motions = motionEvents
        lock.unlock()
        var o: [String: Any] = [
            "allocations": allocations, "motion_reports": motions,
            "card_playback": "SD-card recordings are reachable only through Tuya's closed P2P SDK; not listed",
        ]
        var summary: [String] = []
        // LAN data points first, the cloud's status codes as a fallback.
        let sd = dps["110"].map(\.description) ?? cloudStatus["sd_status"]
        var sdSummary: String?
        if let sd {
            let text =
                ["1": "ok", "2": "abnormal", "3": "full", "4": "formatting", "5": "no card"][sd]
                ?? String(sd.prefix(32))
            o["sd_status"] = text
            sdSummary = "SD \(text)"
        }
        if let storage = dps["109"].map(\.description) ?? cloudStatus["sd_storge"] {
            let kb = storage.split(separator: "|").compactMap { Int64($0) }
            if kb.count == 3 {
                o["sd_total_kb"] = kb[0]
                o["sd_used_kb"] = kb[1]
                o["sd_free_kb"] = kb[2]
                // Space may be reported without a card status (the device's data points come one by one).
                sdSummary = (sdSummary ?? "SD") + String(format: " (%.1f GB free)", Double(kb[2]) / 1_048_576)
            }
        }
        if let sdSummary { summary.append(sdSummary) }
        if let b = dps["145"].map(\.description) ?? cloudStatus["battery_percentage"] {
            o["battery_percent"] = Int(b) ?? b
            summary.append("battery \(b) %")
        }
        if let r = dps["150"].map(\.description) ?? cloudStatus["record_switch"] { o["record_switch"] = r == "true" }
        if let m = dps["151"].map(\.description) ?? cloudStatus["record_mode"] {
            o["record_mode"] = m == "1" ? "event" : m == "2" ? "continuous" : m
            summary.append("camera records \(o["record_mode"]!)")
        }
        if let lan {
            let s = lan.stats
            var l: [String: Any] = [
                "connected": s.connected, "protocol": config.lanVersion.rawValue, "frames_rejected": s.framesRejected,
                "connects": s.connects,
            ]
            if let e = s.lastError { l["last_error"] = e }
            o["lan"] = l
            summary.append(
                s.connected
                    ? "LAN \(config.lanVersion.rawValue) connected" : "LAN down\(s.lastError.map { ": \($0)" } ?? "")")
        }
        if let cloud { o["token_renewals"] = cloud.tokenRenewals }
        if let cloudError {
            o["cloud_error"] = cloudError
            summary.append("cloud: \(cloudError)")
        }
        o["summary"] = summary.joined(separator: ", ")
        return jsonText(o)
    }
}
