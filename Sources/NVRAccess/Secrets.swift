import Crypto
import Foundation

/// Random secrets, their stored form, and keeping secrets out of answers and logs.
public enum Secrets {
    /// 32 random bytes as URL-safe base64 (a session cookie or an API token body).
    public static func randomToken() -> String {
        var rng = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) }
        return Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(
            of: "/", with: "_"
        )
        .replacingOccurrences(of: "=", with: "")
    }

    /// What the index stores of a token: its SHA-256 (a copy of the index gives no way in).
    public static func hash(_ token: String) -> Data { Data(SHA256.hash(data: Data(token.utf8))) }

    /// Constant-time comparison of two strings (CSRF tokens).
    public static func equal(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var diff: UInt8 = 0
        for i in x.indices { diff |= x[i] ^ y[i] }
        return diff == 0
    }

    /// Option names that hold secrets in a camera's config (rtsp `password`, Tuya `secret` and
    /// `local_key`, Insta360 `stream_key`...): never returned, logged or printed.
    public static func isSecretKey(_ key: String) -> Bool {
        let k = key.lowercased()
        return ["password", "passwd", "secret", "key", "token"].contains { k.contains($0) }
    }

    /// A camera config for display: secret options as "***", credentials in URLs hidden.
    public static func redact(config: [String: String]) -> [String: String] {
        var out: [String: String] = [:]
        for (k, v) in config {
            if isSecretKey(k) {
                out[k] = v.isEmpty ? "" : "***"
            } else if v.contains("://") {
                out[k] = redactURL(v)
            } else {
                out[k] = v
            }
        }
        return out
    }

    /// user:password@ in a URL becomes ***@.
    public static func redactURL(_ url: String) -> String {
        guard let scheme = url.range(of: "://"), let at = url[scheme.upperBound...].firstIndex(of: "@") else {
            return url
        }
        let slash = url[scheme.upperBound...].firstIndex(of: "/") ?? url.endIndex
        guard at < slash else { return url }
        return String(url[..<scheme.upperBound]) + "***@" + String(url[url.index(after: at)...])
    }
}
