import CNVRPlugin
import Foundation
import GoProAPI
import PluginSupport

/// One GoPro reached over the Open GoPro HTTP API: keeps it awake, watches its state, starts
/// its live stream for the host (UDP MPEG-TS that the host opens with libavformat), and lists
/// and reads its memory card.
final class GoProCamera: CardCamera, URLCamera, @unchecked Sendable {
    // @unchecked Sendable: mutable state is guarded by `lock`; `config`, `http` and `host`
    // are immutable. The ABI lets the host call in from any thread.

    /// Where the live stream is, like the vendor SDK's player: stopped, starting, streaming, failed.
    enum StreamState: Equatable {
        case stopped, starting, streaming
        case failed(String)
        var name: String {
            switch self {
            case .stopped: "stopped"
            case .starting: "starting"
            case .streaming: "streaming"
            case .failed: "failed"
            }
        }
    }

    let config: GoProConfig
    private let http: HTTPClient
    private let host: PluginHostCallbacks
    private let lock = NSCondition()
    private var state: GoProState?
    private var reachable: Bool?
    private var lastError: String?
    private var stream: StreamState = .stopped
    private var streamStarts = 0
    private var keeper: Thread?
    private var keeperRunning = false
    private var stopping = false
    private var prepared = false
    /// media/info answers by path, size and creation time (files on a card do not change).
    private var infoCache: [String: GoProMediaInfo] = [:]

    init(configJSON: String, host: PluginHostCallbacks) throws {
        config = try GoProConfig(json: configJSON)
        http = HTTPClient(timeout: config.httpTimeout)
        self.host = host
    }

    deinit { stop() }

    /// Stops the keep-alive thread, waiting for it (the host frees its callbacks right after
    /// destroy; the thread must not log after that), and asks the camera to stop streaming.
    func stop() {
        lock.lock()
        // Once: destroy stops, then the last release runs deinit, which stops again.
        let wasRunning = keeper != nil && !stopping
        stopping = true
        lock.broadcast()
        // At most one HTTP timeout: the thread checks `stopping` between calls.
        while keeperRunning, Thread.current !== keeper { lock.wait() }
        let streamState = stream
        lock.unlock()
        if wasRunning, streamState != .stopped {
            _ = try? call(config.mode == "preview" ? "/gopro/camera/stream/stop" : "/gopro/webcam/stop")
        }
    }

    // MARK: HTTP

    /// GET a path of the camera's API; the body of a 200, else a clear error.
    @discardableResult
    func call(_ path: String) throws -> Data {
        let r: HTTPClient.Response
        do { r = try http.get(config.baseURL + path) } catch {
            throw GoProError("camera unreachable at \(config.baseURL): \(error)")
        }
        guard r.status == 200 else {
            let detail = r.text.trimmingCharacters(in: .whitespacesAndNewlines).prefix(120)
            throw GoProError(
                "camera answered HTTP \(r.status) to \(path.split(separator: "?").first ?? "")\(detail.isEmpty ? "" : ": \(detail)")"
            )
        }
        return r.body
    }

    private func note(error: String?) {
        lock.lock()
        let was = reachable
        reachable = error == nil
        lastError = error ?? lastError
        let quiet = stopping
        lock.unlock()
        if quiet { return }
        if let error, was != false { host.log(NVR_LOG_WARNING, error) }
        if error == nil, was == false {
            host.log(NVR_LOG_INFO, "camera reachable again")
            // The host is likely waiting out a backoff (up to 30 s after a long outage): it
            // reconnects now instead.
            host.state(NVR_STATE_CONNECTING, "camera reachable again")
        }
    }

    // MARK: keep-alive and state

    /// Starts the keep-alive/state thread once (not in create: `nvr camera add` only validates).
    private func ensureKeeper() {
        lock.lock()
        defer { lock.unlock() }
        guard keeper == nil, !stopping else { return }
        let t = Thread { [weak self] in
            self?.keepAliveLoop()
            guard let self else { return }
            self.lock.lock()
            self.keeperRunning = false
            self.lock.broadcast()
            self.lock.unlock()
        }
        t.name = "gopro keep-alive"
        keeper = t
        keeperRunning = true
        t.start()
    }

    private var isStopping: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopping
    }

    private func keepAliveLoop() {
        var nextKeepAlive = Date()
        var nextState = Date()
        while true {
            let now = Date()
            if now >= nextKeepAlive {
                do {
                    try call("/gopro/camera/keep_alive")
                    note(error: nil)
                } catch { note(error: "\(error)") }
                nextKeepAlive = now.addingTimeInterval(config.keepAliveSeconds)
            }
            if now >= nextState, !isStopping {
                // Status 60 is the camera's minimum poll period; a minute at most all the same.
                let poll = (try? refreshState())?.minPollMilliseconds ?? 0
                nextState = now.addingTimeInterval(min(max(config.statusSeconds, Double(poll) / 1000), 60))
            }
            lock.lock()
            if stopping {
                lock.unlock()
                return
            }
            _ = lock.wait(until: min(nextKeepAlive, nextState))
            let stop = stopping
            lock.unlock()
            if stop { return }
        }
    }

    /// Reads /gopro/camera/state and keeps it for status().
    @discardableResult
    func refreshState() throws -> GoProState {
        do {
            let s = try GoProState(json: try call("/gopro/camera/state"))
            lock.lock()
            state = s
            if config.mode == "preview" {
                if s.previewActive, stream == .starting { stream = .streaming }
            }
            lock.unlock()
            note(error: nil)
            return s
        } catch {
            note(error: "\(error)")
            throw error
        }
    }

    // MARK: live

    /// Starts (or restarts) the camera's stream and returns the UDP input for the host.
    /// The host calls this before every connection, so a stream that fell silent for
    /// `silence_seconds` (the input's read timeout) is stopped and started again here.
    func liveSource() throws -> String {
        ensureKeeper()
        setStream(.starting)
        do {
            try prepare()
            try waitUntilNotBusy()
            if config.mode == "preview" {
                _ = try? call("/gopro/camera/stream/stop")
                try call("/gopro/camera/stream/start" + (config.sendPort ? "?port=\(config.port)" : ""))
            } else {
                _ = try? call("/gopro/webcam/stop")
                var q = "?res=\(config.webcamResolution)&fov=\(config.webcamFOV)&protocol=TS"
                if config.sendPort { q += "&port=\(config.port)" }
                try call("/gopro/webcam/start" + q)
            }
        } catch {
            setStream(.failed("\(error)"))
            throw error
        }
        lock.lock()
        streamStarts += 1
        if config.mode == "webcam" { stream = .streaming }
        lock.unlock()
        let timeout = config.silenceSeconds * 1_000_000
        return jsonText([
            "url": "udp://@:\(config.port)?timeout=\(timeout)&fifo_size=1000000&overrun_nonfatal=1&buffer_size=4194304",
            "format": "mpegts",
        ])
    }

    private func setStream(_ s: StreamState) {
        lock.lock()
        stream = s
        lock.unlock()
    }

    /// USB: wired control on; then claim control from the camera's own UI (HERO10+; older
    /// models answer an error, which is fine).
    private func prepare() throws {
        lock.lock()
        let done = prepared
        lock.unlock()
        guard !done else { return }
        if config.usb { try call("/gopro/camera/control/wired_usb?p=1") }
        _ = try? call("/gopro/camera/control/set_ui_controller?p=2")
        lock.lock()
        prepared = true
        lock.unlock()
    }

    /// Waits while status 8 (busy) is set, up to busy_wait_seconds.
    private func waitUntilNotBusy() throws {
        let deadline = Date(timeIntervalSinceNow: config.busyWaitSeconds)
        while true {
            let s = try refreshState()
            if !s.busy { return }
            if Date() >= deadline {
                throw GoProError("camera is busy (status 8) for more than \(Int(config.busyWaitSeconds)) s; will retry")
            }
            Thread.sleep(forTimeInterval: 0.5)
        }
    }

    // MARK: status

    /// Status for the NVR's camera list and API.
    func statusJSON() -> String {
        lock.lock()
        let s = state
        let reachable = self.reachable
        let lastError = self.lastError
        let stream = self.stream
        let starts = streamStarts
        lock.unlock()
        var o: [String: Any] = ["stream": stream.name, "stream_starts": starts]
        if case .failed(let why) = stream { o["stream_error"] = why }
        if let reachable { o["reachable"] = reachable }
        if let lastError { o["last_error"] = lastError }
        var summary: [String] = []
        if let s {
            if let p = s.batteryPercent {
                o["battery_percent"] = p
                summary.append("battery \(p) %")
            }
            if let b = s.batteryBars {
                o["battery_bars"] = b
                if b == 4 { summary.append("charging") }
            }
            o["busy"] = s.busy
            o["encoding"] = s.encoding
            if let d = s.encodingSeconds { o["encoding_seconds"] = d }
            o["overheating"] = s.overheating
            if let st = s.storage { o["sd"] = st.text }
            if let kb = s.sdRemainingKB { o["sd_remaining_kb"] = kb }
            if let kb = s.sdCapacityKB { o["sd_capacity_kb"] = kb }
            if let m = s.remainingVideoMinutes { o["remaining_video_minutes"] = m }
            var sd = "SD \(s.storage?.text ?? "?")"
            if let kb = s.sdRemainingKB { sd += String(format: " (%.1f GB free)", Double(kb) / 1_048_576) }
            summary.append(sd)
            if s.encoding { summary.append("recording on card") }
            if s.overheating { summary.append("OVERHEATING") }
        }
        summary.append("stream \(stream.name)")
        if reachable == false { summary.append("unreachable") }
        o["summary"] = summary.joined(separator: ", ")
        return jsonText(o)
    }

    // MARK: card

    /// The videos on the card with their camera-local spans (see nvr_plugin.h, card_list).
    func cardList() throws -> String {
        ensureKeeper()
        let list = try GoProMediaList(json: try call("/gopro/media/list"))
        var videos: [(item: GoProMediaList.Item, info: GoProMediaInfo)] = []
        for item in list.items where item.isVideo {
            let key = "\(item.path) \(item.size) \(item.created)"
            lock.lock()
            let cached = infoCache[key]
            lock.unlock()
            let info: GoProMediaInfo
            if let cached {
                info = cached
            } else {
                let path = item.path.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? item.path
                info = try GoProMediaInfo(json: try call("/gopro/media/info?path=\(path)"))
                lock.lock()
                infoCache[key] = info
                lock.unlock()
            }
            videos.append((item, info))
        }
        // The cache follows the card: entries for files no longer listed go.
        let listed = Set(list.items.map { "\($0.path) \($0.size) \($0.created)" })
        lock.lock()
        infoCache = infoCache.filter { listed.contains($0.key) }
        lock.unlock()
        let media = GoProCardVideo.spans(videos).map { v -> [String: Any] in
            ["id": v.path, "name": v.name, "start_local": v.startLocal, "duration": v.durationSeconds, "size": v.size]
        }
        // Read the clock last, right before answering, so the host's "now" is close to it. The
        // camera gives whole seconds: watching for the tick pins it down to a few tens of ms
        // (a card key frame then lands next to the live footage it continues).
        var out: [String: Any] = ["media": media]
        if let clock = try? preciseCameraClock(read: {
            Double(try GoProDateTime(json: try call("/gopro/camera/get_date_time")).localEpoch)
        }) {
            out["clock_local"] = clock
        }
        return jsonText(out)
    }

    /// Streams a byte range of a card file from /videos/DCIM with an HTTP Range request.
    /// Returns false when the sink cancelled.
    func cardRead(id: String, offset: Int64, length: Int64, sink: (UnsafeRawBufferPointer) -> Bool) throws -> Bool {
        guard !id.contains(".."), id.split(separator: "/").count == 2 else {
            throw GoProError("'\(id)' is not a card file (DIR/NAME)")
        }
        let path = "/videos/DCIM/" + (id.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? id)
        do {
            return try http.readRange(config.baseURL + path, offset: offset, length: length, sink: sink)
        } catch {
            // The host says which file; this says why.
            throw GoProError("\(error)".hasSuffix("HTTP 404") ? "no such file on the card (HTTP 404)" : "\(error)")
        }
    }
}
