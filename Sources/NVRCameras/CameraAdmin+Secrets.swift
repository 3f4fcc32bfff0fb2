import Foundation
import NVRAccess

extension CameraAdmin {
    /// Options that say where a camera is: URLs (any value with "://") and these names.
    static let addressKeys: Set<String> = ["address", "host", "ip", "lan_host", "cloud_host", "base_url"]

    /// Where a camera's settings point: each address option's scheme, host and port (the
    /// scheme's default port filled in), parsed as the plugins and FFmpeg parse them. nil when
    /// one cannot be parsed: then nothing is taken to be the same place.
    static func destinations(_ config: [String: String]) -> [String: String]? {
        var out: [String: String] = [:]
        for (k, v) in config where v.contains("://") || addressKeys.contains(k.lowercased()) {
            guard v.contains("://") else {
                out[k] = v.trimmingCharacters(in: .whitespaces).lowercased()
                continue
            }
            guard let u = URLComponents(string: v), let scheme = u.scheme?.lowercased(),
                let host = u.host?.lowercased(),
                !host.isEmpty
            else { return nil }
            let port = u.port ?? ["rtsp": 554, "rtsps": 322, "http": 80, "https": 443, "rtmp": 1935][scheme] ?? 0
            out[k] = "\(scheme)://\(host):\(port)"
        }
        return out
    }

    /// Puts a camera's stored secrets back where a form sent what it was shown: "***" for a
    /// secret option, and a URL whose user and password show as `***@`. Only towards the same
    /// place: when every address option (URLs, hosts) still says what is stored, by scheme, host
    /// and port. Settings that point elsewhere, or at nothing that can be compared, must type
    /// the secrets again: a stored one would be sent to whatever they point at.
    static func restoringSecrets(_ sent: [String: String], stored: [String: String]) throws -> [String: String] {
        var out = sent
        var restored: [String] = []
        for (k, v) in sent {
            if v == "***", let secret = stored[k] {
                out[k] = secret
                restored.append(k)
            } else if let url = restoredURL(v, stored: stored[k]) {
                out[k] = url
                restored.append(k)
            }
        }
        guard !restored.isEmpty else { return out }
        // The place the settings point at once merged over what is stored.
        let merged = stored.merging(out) { _, new in new }
        guard let home = destinations(stored), !home.isEmpty, let target = destinations(merged), target == home else {
            throw Failure(
                .invalid,
                "type \(restored.sorted().map { "'\($0)'" }.joined(separator: ", ")) again: a stored secret only goes to the address it was set for"
            )
        }
        return out
    }

    /// A change that points a camera elsewhere must bring its secrets too: the stored ones
    /// would otherwise be sent to the new address. `config` is what is stored, `merged` the
    /// result of the change; `sent` the option names the change set.
    static func checkSecretsFollow(from config: [String: String], to merged: [String: String], sent: Set<String>) throws
    {
        let isAddress = { (k: String, v: String) in v.contains("://") || addressKeys.contains(k.lowercased()) }
        if merged.filter(isAddress) == config.filter(isAddress) { return }
        if let before = destinations(config), before == destinations(merged) { return }
        let kept = merged.keys.filter { Secrets.isSecretKey($0) && !(merged[$0] ?? "").isEmpty && !sent.contains($0) }
        guard kept.isEmpty else {
            throw Failure(
                .invalid,
                "the camera's address changed: type \(kept.sorted().map { "'\($0)'" }.joined(separator: ", ")) again (a stored secret only goes to the address it was set for)"
            )
        }
    }

    /// `url` with `***@` for its user information, given back the stored URL's; nil when `url`
    /// has no `***@` or the stored URL has no user information.
    static func restoredURL(_ url: String, stored: String?) -> String? {
        guard let scheme = url.range(of: "://"), url[scheme.upperBound...].hasPrefix("***@"),
            let stored, let storedScheme = stored.range(of: "://"),
            let at = stored[storedScheme.upperBound...].firstIndex(of: "@")
        else { return nil }
        let slash = stored[storedScheme.upperBound...].firstIndex { "/?#".contains($0) } ?? stored.endIndex
        guard at < slash else { return nil }
        let userInfo = stored[storedScheme.upperBound..<at]
        return String(url[..<scheme.upperBound]) + userInfo + String(url[url.index(scheme.upperBound, offsetBy: 3)...])
    }
}
