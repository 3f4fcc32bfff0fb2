import Foundation
import PluginSupport

/// An Insta360 camera's settings (`nvr camera add NAME --plugin insta360 --option key=value`).
struct Insta360Config {
    /// Where the camera's OSC server answers (its own access point by default).
    var baseURL: String
    /// The RTMP listener the camera (or its phone app) pushes live video to:
    /// rtmp://<this NVR>:rtmpPort/rtmpApp/streamKey.
    var rtmpAddress: String
    var rtmpPort: Int
    var rtmpApp: String
    var streamKey: String
    /// Seconds of camera-side capture started by an NVR event (0: never touch the camera).
    var captureOnEventSeconds: Int
    var httpTimeout: Double
    /// Longest wait of one /osc/checkForUpdates (the camera may answer sooner).
    var updatesWaitSeconds: Int
    /// Seconds between state checks when the camera does not hold checkForUpdates.
    var statusSeconds: Double
    /// camera.listFiles page size (entryCount).
    var listPageSize: Int
    /// Seconds between status polls of an in-progress OSC command.
    var commandPollSeconds: Double

    static let options: Set<String> = [
        "base_url", "rtmp_address", "rtmp_port", "rtmp_app", "stream_key", "capture_on_event_seconds",
        "http_timeout", "updates_wait_seconds", "status_seconds", "list_page_size", "command_poll_ms",
    ]

    init(json: String) throws {
        let c = try PluginConfig(json: json, allowed: Self.options)
        if let base = try c.string("base_url") {
            guard let u = URLComponents(string: base), u.scheme == "http", u.host?.isEmpty == false else {
                throw PluginConfigError("option 'base_url' must look like http://192.168.42.1")
            }
            baseURL = base.hasSuffix("/") ? String(base.dropLast()) : base
        } else {
            baseURL = "http://192.168.42.1:80"
        }
        rtmpAddress = try c.string("rtmp_address") ?? "0.0.0.0"
        guard !rtmpAddress.isEmpty,
            rtmpAddress.allSatisfy({ $0.isHexDigit || $0 == "." || $0 == ":" || $0.isLetter || $0 == "-" })
        else {
            throw PluginConfigError("option 'rtmp_address' must be an address to listen on, e.g. 0.0.0.0")
        }
        rtmpPort = try c.int("rtmp_port", in: 1...65535) ?? 1935
        rtmpApp = try c.string("rtmp_app") ?? "live"
        guard let key = try c.string("stream_key") else {
            throw PluginConfigError(
                "option 'stream_key' is required: the camera pushes to rtmp://NVR:\(rtmpPort)/\(rtmpApp)/KEY")
        }
        let safe: (String) -> Bool = {
            !$0.isEmpty && $0.count <= 128 && $0.allSatisfy { $0.isLetter || $0.isNumber || "-_.".contains($0) }
        }
        guard safe(key) else {
            throw PluginConfigError("option 'stream_key' must be letters, digits, - _ . (up to 128)")
        }
        guard safe(rtmpApp) else { throw PluginConfigError("option 'rtmp_app' must be letters, digits, - _ .") }
        streamKey = key
        captureOnEventSeconds = try c.int("capture_on_event_seconds", in: 0...3600) ?? 0
        httpTimeout = Double(try c.int("http_timeout", in: 1...120) ?? 5)
        updatesWaitSeconds = try c.int("updates_wait_seconds", in: 0...120) ?? 10
        statusSeconds = Double(try c.int("status_seconds", in: 1...600) ?? 5)
        listPageSize = try c.int("list_page_size", in: 1...1000) ?? 50
        commandPollSeconds = Double(try c.int("command_poll_ms", in: 50...10_000) ?? 1000) / 1000
    }

    /// The listener URL libavformat opens (the key stays out of logs: see `publicURL`).
    var listenURL: String {
        "rtmp://\(rtmpAddress.contains(":") ? "[\(rtmpAddress)]" : rtmpAddress):\(rtmpPort)/\(rtmpApp)/\(streamKey)"
    }
    /// What to tell people: where to push, key hidden.
    var publicURL: String { "rtmp://<nvr>:\(rtmpPort)/\(rtmpApp)/<stream_key>" }
}
