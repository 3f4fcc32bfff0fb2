import Foundation
import Insta360API
import PluginSupport

/// Discovery for the insta360 plugin. Insta360 cameras announce nothing on a network: a
/// camera is reached on its own Wi-Fi access point, where it is always 192.168.42.1. So when
/// this machine has an address on 192.168.42.0/24, the camera's `/osc/info` is asked there,
/// and a camera that answers as OSC is listed.
enum Insta360Finder {
    static let accessPoint = "192.168.42.1"

    static func discover(seconds: Double) throws -> String {
        let onAccessPoint = MulticastQuery.interfaces().contains { i in
            let a = UInt32(bigEndian: i.address.s_addr)
            return a & 0xffff_ff00 == 0xc0a8_2a00 && a != 0xc0a8_2a01
        }
        guard onAccessPoint, let camera = confirm(timeout: min(max(seconds, 0.5), 3)) else {
            return jsonText(["found": [Any]()])
        }
        return jsonText(["found": [camera]])
    }

    /// The camera at the access point address as the host's discovery list wants it.
    static func confirm(timeout: Double) -> [String: Any]? {
        guard
            let r = try? HTTPClient(timeout: timeout).fetch(
                "http://\(accessPoint)/osc/info", headers: OSC.requestHeaders, maxBody: 64 << 10),
            r.status == 200, let info = try? OSC.object(r.body, from: "/osc/info"),
            info["api"] is [Any] || info["model"] is String
        else { return nil }
        func field(_ k: String) -> String? {
            guard let s = info[k] as? String, !s.isEmpty, s.count <= 64 else { return nil }
            return s
        }
        let model = field("model")
        // The plugin's default address; the stream key is the one set in the camera's app for
        // live streaming to rtmp://NVR:1935/live/KEY.
        var o: [String: Any] = ["address": accessPoint, "options": [String: String](), "needs": ["stream_key"]]
        if let serial = field("serialNumber") { o["id"] = serial }
        if let model {
            o["name"] = model
            o["model"] = model + (field("firmwareVersion").map { " (\($0))" } ?? "")
        }
        return o
    }
}
