import Foundation
import ONVIFAPI
import PluginSupport

/// The PTZ service of one ONVIF camera, for the profile recorded, and what its configuration
/// offers.
struct ONVIFPTZLink {
    var service: PTZService?
    var abilities: PTZService.Abilities
    /// Why there is no PTZ, when `service` is nil.
    var missing: String?
}

/// Pan, tilt, zoom and presets (nvr_plugin.h, nvr_ptz_functions) through the camera's PTZ
/// service. The host bounds and checks requests; this side clamps again, as it talks to the
/// camera.
extension ONVIFCamera: PTZCamera {
    func ptz(request: String) throws -> String {
        guard let r = (try? JSONSerialization.jsonObject(with: Data(request.utf8))) as? [String: Any],
            let op = r["op"] as? String
        else { throw PluginConfigError("a PTZ request is a JSON object with an 'op'") }
        let link = try ptzLink { try findPTZ() }
        guard let ptz = link.service else { return jsonText(["unsupported": link.missing ?? "no PTZ service"]) }
        func number(_ key: String) -> Double {
            (r[key] as? NSNumber)?.doubleValue.clamped(-1, 1) ?? 0
        }
        do {
            switch op {
            case "describe":
                var out: [String: Any] = [
                    // A camera that refuses presets still turns.
                    "presets": ((try? ptz.presets()) ?? []).map { ["token": $0.token, "name": $0.name] },
                    "pan_tilt": link.abilities.panTilt, "zoom": link.abilities.zoom,
                    "absolute_zoom": link.abilities.absoluteZoom,
                ]
                if let p = try? ptz.position() { out["position"] = ["pan": p.pan, "tilt": p.tilt, "zoom": p.zoom] }
                return jsonText(out)
            case "move":
                let seconds = (r["seconds"] as? NSNumber)?.doubleValue.clamped(0.1, 10) ?? 1
                try ptz.move(pan: number("pan"), tilt: number("tilt"), zoom: number("zoom"), seconds: seconds)
            case "stop":
                try ptz.stop()
            case "goto":
                guard let preset = r["preset"] as? String, !preset.isEmpty else {
                    throw PluginConfigError("goto needs a 'preset'")
                }
                try ptz.goTo(preset: preset)
            case "set":
                let name = (r["name"] as? String) ?? ""
                guard !name.isEmpty else { throw PluginConfigError("set needs a 'name'") }
                return jsonText(["preset": try ptz.setPreset(name: name, preset: r["preset"] as? String)])
            case "zoom":
                guard link.abilities.absoluteZoom else {
                    return jsonText(["unsupported": "the camera offers no absolute zoom"])
                }
                try ptz.zoom(to: ((r["zoom"] as? NSNumber)?.doubleValue ?? 0).clamped(0, 1))
            default:
                return jsonText(["unsupported": "no PTZ operation '\(op.prefix(32))'"])
            }
        } catch {
            // Found again next time: a camera that rebooted or was reconfigured may have moved
            // its service or renamed its profiles.
            forgetPTZLink()
            throw error
        }
        return "{}"
    }

    /// The PTZ service and the profile to name: the recorded (main) profile when it carries a
    /// PTZ configuration, else the first profile that does.
    private func findPTZ() throws -> ONVIFPTZLink {
        _ = try? client.syncClock()
        let services = try client.services()
        guard let url = services.ptz else {
            return ONVIFPTZLink(
                service: nil, abilities: .init(panTilt: false, zoom: false, absoluteZoom: false),
                missing: "the camera offers no PTZ service")
        }
        let profiles = try client.profiles(media: services.media)
        let main = (try? choose(profiles))?.0
        guard
            let profile = [main].compactMap({ $0 }).filter({ $0.ptzConfiguration != nil }).first
                ?? profiles.first(where: { $0.ptzConfiguration != nil })
        else {
            return ONVIFPTZLink(
                service: nil, abilities: .init(panTilt: false, zoom: false, absoluteZoom: false),
                missing: "none of the camera's media profiles has a PTZ configuration")
        }
        let service = PTZService(client: client, url: url, profile: profile.token)
        let abilities = try service.abilities(configuration: profile.ptzConfiguration)
        guard abilities.panTilt || abilities.zoom else {
            return ONVIFPTZLink(
                service: nil, abilities: abilities, missing: "the camera's PTZ configuration offers no movement")
        }
        return ONVIFPTZLink(service: service, abilities: abilities, missing: nil)
    }
}

extension Double {
    /// Within lo…hi; a NaN becomes lo.
    fileprivate func clamped(_ lo: Double, _ hi: Double) -> Double { isNaN ? lo : Swift.min(Swift.max(self, lo), hi) }
}
