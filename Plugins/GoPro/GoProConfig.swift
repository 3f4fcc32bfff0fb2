import Foundation
import GoProAPI
import PluginSupport

/// A GoPro camera's settings (`nvr camera add NAME --plugin gopro --option key=value`).
struct GoProConfig {
    /// Where the camera's HTTP API answers.
    var baseURL: String
    /// USB (NCM) connection: wired control is switched on before anything else.
    var usb: Bool
    /// Live video: the preview stream, or webcam mode with a chosen resolution and lens.
    var mode: String
    var webcamResolution: Int
    var webcamFOV: Int
    /// UDP port the camera sends MPEG-TS to; asked for explicitly unless `sendPort` is false
    /// (HERO9–11 reject the preview's `port` parameter and always use 8554).
    var port: Int
    var sendPort: Bool
    /// Seconds without a packet before the stream counts as lost and is restarted.
    var silenceSeconds: Int
    var keepAliveSeconds: Double
    var statusSeconds: Double
    var httpTimeout: Double
    /// Longest wait for the camera to stop being busy before a command.
    var busyWaitSeconds: Double

    static let options: Set<String> = [
        "base_url", "connection", "serial", "mode", "res", "fov", "port", "send_port",
        "silence_seconds", "keepalive_seconds", "status_seconds", "http_timeout", "busy_wait_seconds",
    ]

    init(json: String) throws {
        let c = try PluginConfig(json: json, allowed: Self.options)
        let connection = try c.string("connection")?.lowercased() ?? "wifi"
        guard ["wifi", "usb"].contains(connection) else {
            throw PluginConfigError("option 'connection' must be wifi or usb")
        }
        usb = connection == "usb"
        if let base = try c.string("base_url") {
            guard let u = URLComponents(string: base), u.scheme == "http", u.host?.isEmpty == false else {
                throw PluginConfigError("option 'base_url' must look like http://10.5.5.9:8080")
            }
            baseURL = base.hasSuffix("/") ? String(base.dropLast()) : base
        } else if usb {
            guard let serial = try c.string("serial") else {
                throw PluginConfigError("a USB camera needs option 'serial' (or 'base_url')")
            }
            do { baseURL = try GoProAPI.usbBaseURL(serial: serial) } catch { throw PluginConfigError("\(error)") }
        } else {
            baseURL = "http://10.5.5.9:8080"
        }
        mode = try c.string("mode")?.lowercased() ?? "preview"
        guard ["preview", "webcam"].contains(mode) else {
            throw PluginConfigError("option 'mode' must be preview or webcam")
        }
        switch try c.string("res") ?? "720" {
        case "480", "480p", "4": webcamResolution = 4
        case "720", "720p", "7": webcamResolution = 7
        case "1080", "1080p", "12": webcamResolution = 12
        default: throw PluginConfigError("option 'res' must be 480, 720 or 1080")
        }
        switch try c.string("fov")?.lowercased() ?? "wide" {
        case "wide", "0": webcamFOV = 0
        case "narrow", "2": webcamFOV = 2
        case "superview", "3": webcamFOV = 3
        case "linear", "4": webcamFOV = 4
        default: throw PluginConfigError("option 'fov' must be wide, narrow, superview or linear")
        }
        port = try c.int("port", in: 1024...65535) ?? 8554
        sendPort = try c.bool("send_port") ?? (port != 8554)
        silenceSeconds = try c.int("silence_seconds", in: 1...60) ?? 3
        keepAliveSeconds = Double(try c.int("keepalive_seconds", in: 1...60) ?? 3)
        statusSeconds = Double(try c.int("status_seconds", in: 1...600) ?? 5)
        httpTimeout = Double(try c.int("http_timeout", in: 1...120) ?? 5)
        busyWaitSeconds = Double(try c.int("busy_wait_seconds", in: 0...600) ?? 10)
    }
}
