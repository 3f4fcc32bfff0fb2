import Foundation
import PluginSupport

/// A generic IP camera reached over RTSP/RTSPS. The host opens the URL with libavformat,
/// which handles Basic and Digest authentication from the URL's credentials.
final class RTSPCamera {
    let url: String
    let substreamURL: String?
    let transport: String
    let timeoutSeconds: Int
    /// "native" (the host's own RTSP/TCP client, least CPU) or "libav" (libavformat's).
    let client: String

    static let options: Set<String> = ["url", "user", "password", "transport", "substream_url", "timeout", "client"]

    init(configJSON: String) throws {
        let c = try PluginConfig(json: configJSON, allowed: Self.options)
        guard let raw = try c.string("url"), !raw.isEmpty else {
            throw PluginConfigError("option 'url' is required (rtsp://host:554/path)")
        }
        let user = try c.string("user")
        let password = try c.string("password")
        url = try Self.validated(raw, user: user, password: password)
        substreamURL = try c.string("substream_url").map { try Self.validated($0, user: user, password: password) }
        transport = try c.string("transport")?.lowercased() ?? "tcp"
        guard ["tcp", "udp"].contains(transport) else {
            throw PluginConfigError("option 'transport' must be tcp or udp")
        }
        timeoutSeconds = try c.int("timeout", in: 1...120) ?? 10
        client = try c.string("client")?.lowercased() ?? "native"
        guard ["native", "libav"].contains(client) else {
            throw PluginConfigError("option 'client' must be native or libav")
        }
    }

    /// Checks the scheme and host, and puts user and password into the URL (percent-encoded).
    static func validated(_ raw: String, user: String?, password: String?) throws -> String {
        guard var comps = URLComponents(string: raw), let scheme = comps.scheme?.lowercased(),
            ["rtsp", "rtsps"].contains(scheme)
        else {
            throw PluginConfigError("'\(raw)' is not an rtsp:// or rtsps:// URL")
        }
        guard let host = comps.host, !host.isEmpty else { throw PluginConfigError("'\(raw)' has no host") }
        if let user { comps.user = user }
        if let password { comps.password = password }
        guard let s = comps.string else { throw PluginConfigError("cannot build a URL from '\(raw)'") }
        return s
    }

    /// The JSON the host opens: URL, format and libavformat options.
    func liveSource(substream: Bool) -> String {
        let chosen = substream ? (substreamURL ?? url) : url
        return jsonText([
            "url": chosen,
            "format": "rtsp",
            "client": client,
            "options": ["rtsp_transport": transport, "timeout": String(timeoutSeconds * 1_000_000)],
        ])
    }
}
