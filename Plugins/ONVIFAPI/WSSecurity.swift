import Crypto
import Foundation

/// WS-Security UsernameToken with PasswordDigest, as ONVIF requires (ONVIF Core, "User-based
/// access control"): digest = Base64(SHA-1(nonce + created + password)). Cameras refuse a
/// token whose `Created` is minutes off their own clock, so `created` is our clock moved by
/// the camera's offset (GetSystemDateAndTime).
public enum WSSecurity {
    public static func digest(nonce: [UInt8], created: String, password: String) -> String {
        var h = Insecure.SHA1()
        h.update(data: nonce)
        h.update(data: Array(created.utf8))
        h.update(data: Array(password.utf8))
        return Data(h.finalize()).base64EncodedString()
    }

    /// xs:dateTime in UTC, whole seconds ("2026-11-23T10:00:00Z"), as the ONVIF examples
    /// write it (some cameras refuse fractions).
    public static func timestamp(_ date: Date) -> String {
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = TimeZone(identifier: "UTC") ?? .current
        let c = cal.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02dZ", c.year ?? 1970, c.month ?? 1, c.day ?? 1, c.hour ?? 0,
            c.minute ?? 0, c.second ?? 0)
    }

    /// The SOAP header's Security element for `user`, created at `created` (the camera's
    /// clock), with a fresh random nonce.
    public static func header(user: String, password: String, created: Date) -> String {
        var rng = SystemRandomNumberGenerator()
        let nonce = (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let stamp = timestamp(created)
        return
            "<wsse:Security s:mustUnderstand=\"1\"><wsse:UsernameToken><wsse:Username>\(SOAP.escape(user))</wsse:Username>"
            + "<wsse:Password Type=\"\(passwordDigestType)\">\(digest(nonce: nonce, created: stamp, password: password))</wsse:Password>"
            + "<wsse:Nonce EncodingType=\"\(base64Type)\">\(Data(nonce).base64EncodedString())</wsse:Nonce>"
            + "<wsu:Created>\(stamp)</wsu:Created></wsse:UsernameToken></wsse:Security>"
    }

    static let passwordDigestType =
        "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordDigest"
    static let base64Type =
        "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary"
}
