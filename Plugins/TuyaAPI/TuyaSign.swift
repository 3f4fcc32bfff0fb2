import Crypto
import Foundation

/// Tuya cloud OpenAPI request signing (PROTOCOLS.md, "Signing"):
///
///     stringToSign = METHOD "\n" hex(SHA256(body)) "\n" signedHeaders "\n" url
///     str          = client_id + [access_token] + t + nonce + stringToSign
///     sign         = uppercase hex(HMAC-SHA256(secret, str))
///
/// where `url` is the path plus `?` and the query sorted by key, and `t` the 13-digit
/// milliseconds. Business calls include the access token; token calls do not.
public enum TuyaSign {
    /// SHA256 of an empty body, as PROTOCOLS.md gives it.
    public static let emptyBodySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    public static func sha256Hex(_ data: Data) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    /// The path with its query sorted by key (`/v1.0/token?grant_type=1`); values as given.
    public static func canonicalURL(path: String, query: [(String, String)]) -> String {
        guard !query.isEmpty else { return path }
        let sorted = query.enumerated().sorted { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }.map(\.element)
        return path + "?" + sorted.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    }

    public static func stringToSign(method: String, body: Data = Data(), signedHeaders: String = "", url: String)
        -> String
    {
        "\(method.uppercased())\n\(sha256Hex(body))\n\(signedHeaders)\n\(url)"
    }

    public static func sign(
        clientID: String, secret: String, accessToken: String?, t: String, nonce: String = "",
        stringToSign: String
    ) -> String {
        let str = clientID + (accessToken ?? "") + t + nonce + stringToSign
        let mac = HMAC<SHA256>.authenticationCode(for: Data(str.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return mac.map { String(format: "%02X", $0) }.joined()
    }
}
