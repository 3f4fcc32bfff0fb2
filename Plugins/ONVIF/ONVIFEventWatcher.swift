import CNVRPlugin
import Foundation
import NVRWorker
import ONVIFAPI
import PluginSupport

/// The camera's own events, on a thread of their own: a PullPoint subscription pulled in
/// short long-polls (the camera answers as soon as it has a message), renewed at half its
/// lifetime, and made again at once when the camera drops it (its address answers
/// ResourceUnknown) — after a failure to reach the camera, again with backoff (1 s doubling
/// to 30 s). Each topic the NVR knows (ONVIFNotification.nvrEvent) becomes an NVR event start
/// or stop when its state changes; the state a new subscription starts with (`Initialized`)
/// ends an event the camera dropped meanwhile.
final class ONVIFEventWatcher: @unchecked Sendable {
    // @unchecked Sendable: `current` is behind the worker's lock; `active` is the worker thread's.
    private let client: ONVIFClient
    private let config: ONVIFConfig
    private let host: PluginHostCallbacks
    private let worker = Worker(name: "onvif events")
    private var current = Status()
    private var active: [String: Bool] = [:]
    /// Seconds each PullMessages waits: short, so `stop` returns within about this long.
    static let pullSeconds = 2

    struct Status {
        var state = "starting"
        var subscriptions = 0
        var events = 0
        var lastError: String?
        var json: [String: Any] {
            var o: [String: Any] = ["state": state, "subscriptions": subscriptions, "events": events]
            if let lastError { o["last_error"] = lastError }
            return o
        }
    }

    init(client: ONVIFClient, config: ONVIFConfig, host: PluginHostCallbacks) {
        self.client = client
        self.config = config
        self.host = host
    }

    var status: Status { worker.locked { current } }

    private func update(_ change: (inout Status) -> Void) { worker.locked { change(&current) } }

    func start() { worker.start { [self] in run() } }

    func stop() { worker.stop() }

    private var isStopping: Bool { worker.isStopping }

    /// Waits `seconds` unless stopped meanwhile.
    private func pause(_ seconds: Double) { worker.wait(seconds: seconds) }

    private func run() {
        var backoff = 1.0
        var lastLogged = ""
        while !isStopping {
            // Whether the subscription that just ended had delivered a pull: only then is a
            // ResourceUnknown a dropped subscription to make again at once (a camera faulting
            // every call with it must not be asked in a tight loop).
            var pulled = false
            do {
                // As ONVIFCamera: a clock the camera will not tell leaves the offset as it was.
                _ = try? client.syncClock()
                guard !isStopping else { break }
                guard let events = try client.services().events else {
                    update { $0.state = "the camera offers no event service" }
                    if lastLogged != "none" {
                        host.log(NVR_LOG_INFO, "onvif: the camera offers no event service; no camera events")
                        lastLogged = "none"
                    }
                    pause(300)
                    continue
                }
                guard !isStopping else { break }
                let sub = try PullPointSubscription(client: client, events: events, seconds: config.subscriptionSeconds)
                defer { sub.unsubscribe() }
                update {
                    $0.subscriptions += 1
                    $0.state = "subscribed"
                    $0.lastError = nil
                }
                host.log(
                    NVR_LOG_INFO,
                    "onvif: subscribed to the camera's events (PullPoint, renewed every \(config.subscriptionSeconds / 2) s)"
                )
                lastLogged = ""
                // Renewed on the monotonic clock: a wall-clock step must not skip or force a renew.
                var renewed = ProcessInfo.processInfo.systemUptime
                while !isStopping {
                    for m in try sub.pull(seconds: Self.pullSeconds) { handle(m) }
                    pulled = true
                    backoff = 1
                    if ProcessInfo.processInfo.systemUptime - renewed >= Double(config.subscriptionSeconds) / 2 {
                        try sub.renew(seconds: config.subscriptionSeconds)
                        renewed = ProcessInfo.processInfo.systemUptime
                    }
                }
            } catch {
                if isStopping { break }
                let message = String("\(error)".prefix(300))
                let gone = (error as? ONVIFError)?.kind == .subscriptionGone && pulled
                update {
                    $0.state = gone ? "subscribing again" : "retrying"
                    $0.lastError = message
                }
                if message != lastLogged {
                    host.log(
                        gone ? NVR_LOG_INFO : NVR_LOG_WARNING,
                        "onvif: camera events: \(message); \(gone ? "subscribing again" : "retrying in \(Int(backoff)) s")"
                    )
                    lastLogged = message
                }
                // A dropped subscription is made again at once (events must not wait); anything
                // else backs off.
                if gone { continue }
                pause(backoff)
                backoff = min(backoff * 2, 30)
            }
        }
    }

    private func handle(_ m: ONVIFNotification) {
        guard let (type, on) = m.nvrEvent else { return }
        guard (active[type] ?? false) != on else { return }
        active[type] = on
        update { $0.events += on ? 1 : 0 }
        host.event(jsonText(["type": type, "phase": on ? "start" : "stop"]))
    }
}
