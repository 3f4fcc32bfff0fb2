import Foundation

extension CameraAdmin {
    /// Puts a camera's stored secrets back where a form sent what it was shown: "***" for a
    /// secret option, and a URL whose user and password show as `***@`. Only towards the same
    /// place: a stored secret goes to the host and port it was set for, never to settings that
    /// point elsewhere (it would be sent to whatever they point at), which must type it again.
    static func restoringSecrets(_ sent: [String: String], stored: [String: String]) throws -> [String: String] {
        let target = Self.authority(sent["url"].map { restoredURL($0, stored: stored["url"]) ?? $0 } ?? stored["url"])
        let home = Self.authority(stored["url"])
        var out = sent
        for (k, v) in sent {
            if v == "***", let secret = stored[k] {
                guard target == home else {
                    throw Failure(
                        .invalid,
                        "type '\(k)' again: a stored secret only goes to the address it was set for (\(home ?? "none"))"
                    )
                }
                out[k] = secret
            } else if let restored = restoredURL(v, stored: stored[k]) {
                guard Self.authority(v) == Self.authority(stored[k]) else {
                    throw Failure(
                        .invalid,
                        "type the user and password in '\(k)' again: stored ones only go to the address they were set for"
                    )
                }
                out[k] = restored
            }
        }
        return out
    }

    /// `url` with `***@` for its user information, given back the stored URL's; nil when `url`
    /// has no `***@` or the stored URL has no user information.
    static func restoredURL(_ url: String, stored: String?) -> String? {
        guard let scheme = url.range(of: "://"), url[scheme.upperBound...].hasPrefix("***@"),
            let stored, let storedScheme = stored.range(of: "://"),
            let at = stored[storedScheme.upperBound...].firstIndex(of: "@")
        else { return nil }
        let slash = stored[storedScheme.upperBound...].firstIndex(of: "/") ?? stored.endIndex
        guard at < slash else { return nil }
        let userInfo = stored[storedScheme.upperBound..<at]
        return String(url[..<scheme.upperBound]) + userInfo + String(url[url.index(scheme.upperBound, offsetBy: 3)...])
    }

    /// "host:port" of a URL (without user information), lowercased; nil for none.
    static func authority(_ url: String?) -> String? {
        guard let url, let scheme = url.range(of: "://") else { return nil }
        var rest = url[scheme.upperBound...]
        if let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) { rest = rest[..<slash] }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        return rest.lowercased()
    }
}
