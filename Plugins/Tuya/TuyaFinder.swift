import Foundation
import PluginSupport
import TuyaAPI

#if canImport(Glibc)
    import Glibc
#endif

/// Discovery for the tuya plugin: listens for the devices' own UDP broadcasts (TuyaDiscovery)
/// on ports 6666 and 6667 for the given time. Other programs (Home Assistant, tinytuya) may
/// listen too: the ports are shared (SO_REUSEADDR, SO_REUSEPORT).
enum TuyaFinder {
    static func discover(seconds: Double) throws -> String {
        var sockets: [Int32] = []
        defer { for fd in sockets { close(fd) } }
        var why = ""
        for port in TuyaDiscovery.ports {
            do { sockets.append(try MulticastQuery.sharedSocket(port: port)) } catch { why = "\(error)" }
        }
        guard !sockets.isEmpty else { throw PluginConfigError("Tuya broadcasts (UDP 6666/6667): \(why)") }
        var found: [String: TuyaDiscovery.Announcement] = [:]
        MulticastQuery.receive(on: sockets, seconds: min(max(seconds, 0.2), 30)) { datagram, _ in
            if let a = TuyaDiscovery.announcement(in: datagram) { found[a.deviceID] = a }
            return found.count < 256
        }
        let list: [[String: Any]] = found.values.sorted { $0.deviceID < $1.deviceID }.map { a in
            var options = ["device_id": a.deviceID, "lan_host": a.ip]
            if let v = a.version, ["3.3", "3.4"].contains(v) { options["lan_version"] = v }
            var o: [String: Any] = [
                "address": a.ip, "id": a.deviceID, "options": options,
                // The local key for LAN events; a cloud project's id and secret for live video.
                "needs": ["local_key", "client_id", "secret"],
            ]
            if let p = a.productKey { o["model"] = p }
            return o
        }
        return jsonText(["found": list])
    }
}
