import Foundation
import PluginSupport

/// An ONVIF camera's settings (`nvr camera add NAME --plugin onvif --option address=… --option
/// user=… --option password=…`). Everything else is asked of the camera.
struct ONVIFConfig {
    /// The device service: http://host[:port]/onvif/device_service.
    var deviceURL: String
    var user: String
    var password: String
    /// Profile tokens; nil = chosen from the camera's profiles (the largest picture for the
    /// main stream, the smallest other one for the sub-stream).
    var mainProfile: String?
    var subProfile: String?
    /// No sub-stream even when the camera has a second profile.
    var noSubstream: Bool
    /// Whether the camera's own events (motion, tamper, person, vehicle) are subscribed to.
    var events: Bool
    var transport: String
    var client: String
    var timeout: Double
    /// Seconds a PullPoint subscription lasts before it must be renewed (renewed at half).
    var subscriptionSeconds: Int

    static let options: Set<String> = [
        "address", "user", "password", "main_profile", "sub_profile", "events", "transport", "client",
        "timeout", "subscription_seconds",
    ]

    init(json: String) throws {
        let c = try PluginConfig(json: json, allowed: Self.options)
        guard let address = try c.string("address")?.trimmingCharacters(in: .whitespaces), !address.isEmpty else {
            throw PluginConfigError(
                "option 'address' is required: the camera's address (192.168.1.20, 192.168.1.20:8000, or its device service URL)"
            )
        }
        deviceURL = try Self.deviceURL(address)
        user = try c.string("user") ?? "admin"
        password = try c.string("password") ?? ""
        mainProfile = try c.string("main_profile").flatMap { $0.isEmpty ? nil : $0 }
        let sub = try c.string("sub_profile")
        noSubstream = sub?.lowercased() == "none"
        subProfile = noSubstream || sub?.isEmpty == true ? nil : sub
        events = try c.bool("events") ?? true
        transport = try c.string("transport")?.lowercased() ?? "tcp"
        guard ["tcp", "udp"].contains(transport) else {
            throw PluginConfigError("option 'transport' must be tcp or udp")
        }
        client = try c.string("client")?.lowercased() ?? "native"
        guard ["native", "libav"].contains(client) else {
            throw PluginConfigError("option 'client' must be native or libav")
        }
        timeout = Double(try c.int("timeout", in: 1...120) ?? 10)
        subscriptionSeconds = try c.int("subscription_seconds", in: 10...3600) ?? 60
    }

    /// "host", "host:port" or an http:// URL → the device service URL.
    static func deviceURL(_ address: String) throws -> String {
        let withScheme = address.contains("://") ? address : "http://\(address)"
        guard var u = URLComponents(string: withScheme), u.scheme?.lowercased() == "http", let host = u.host,
            !host.isEmpty
        else {
            throw PluginConfigError("option 'address' must be a host, host:port or http:// URL, not '\(address)'")
        }
        // The password belongs in 'password': one in the URL would show in status and logs.
        guard u.user == nil && u.password == nil else {
            throw PluginConfigError(
                "option 'address' must not carry a user or password: give them as 'user' and 'password'")
        }
        if u.path.isEmpty || u.path == "/" { u.path = "/onvif/device_service" }
        guard let s = u.string else { throw PluginConfigError("cannot make a URL of '\(address)'") }
        return s
    }
}
