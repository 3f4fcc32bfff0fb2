import Crypto
import Foundation

/// An RTSP response: status, headers (lower-cased names), body.
struct RTSPResponse {
    var status: Int
    var reason: String
    var headers: [String: String]
    var body: String

    subscript(_ name: String) -> String? { headers[name.lowercased()] }
}

/// The parts of an rtsp:// URL the client needs; credentials are kept apart from the URL it sends.
package struct RTSPURL {
    var host: String
    package var port: UInt16
    /// The URL without credentials, as sent in requests.
    var plain: String
    var user: String?
    var password: String?

    package init(_ string: String) throws {
        guard var c = URLComponents(string: string), c.scheme?.lowercased() == "rtsp", let host = c.host, !host.isEmpty
        else {
            throw MediaError(.open, "not an rtsp:// URL")
        }
        self.host = host
        guard let p = UInt16(exactly: c.port ?? 554), p > 0 else {
            throw MediaError(.open, "port \(c.port ?? 0) is not a TCP port")
        }
        port = p
        user = c.user?.removingPercentEncoding ?? c.user
        password = c.password?.removingPercentEncoding ?? c.password
        c.user = nil
        c.password = nil
        plain = c.string ?? string
    }

    /// A camera's URL as a client opens it: a URL that is not one is said with the URL
    /// (credentials redacted), "cannot open rtsp://…: not an rtsp:// URL".
    static func opening(_ string: String) throws -> RTSPURL {
        do { return try RTSPURL(string) } catch let e as MediaError {
            throw MediaError(e.kind, "cannot open \(Demuxer.redact(string)): \(e.message)", code: e.code)
        }
    }

    /// Resolves a track's a=control against the base URL.
    func resolve(_ control: String, base: String) -> String {
        if control == "*" || control.isEmpty { return base }
        if control.lowercased().hasPrefix("rtsp://") { return control }
        return base.hasSuffix("/") ? base + control : base + "/" + control
    }
}

/// Builds Authorization headers for Basic and Digest (RFC 2617, MD5, qop=auth or none).
package struct RTSPAuthenticator {
    let user: String
    let password: String
    private var digest: (realm: String, nonce: String, qop: String?, opaque: String?)?
    private var basic = false
    private var nc = 0
    /// Fixed client nonce for tests against published vectors; random otherwise.
    var fixedCNonce: String?

    package init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// Takes the server's challenge; false if it offers nothing we speak.
    package mutating func challenge(_ header: String) -> Bool {
        let lower = header.lowercased()
        if lower.hasPrefix("digest") {
            let p = Self.params(String(header.dropFirst(6)))
            guard let realm = p["realm"], let nonce = p["nonce"] else { return false }
            if let alg = p["algorithm"], alg.uppercased() != "MD5" { return false }
            let qop = p["qop"].flatMap {
                $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.contains("auth") ? "auth" : nil
            }
            digest = (realm, nonce, qop, p["opaque"])
            return true
        }
        if lower.hasPrefix("basic") {
            basic = true
            return true
        }
        return false
    }

    var ready: Bool { digest != nil || basic }

    package mutating func header(method: String, uri: String) -> String? {
        if let d = digest {
            let ha1 = md5("\(user):\(d.realm):\(password)")
            let ha2 = md5("\(method):\(uri)")
            var h = "Digest username=\"\(user)\", realm=\"\(d.realm)\", nonce=\"\(d.nonce)\", uri=\"\(uri)\""
            if let qop = d.qop {
                nc += 1
                let ncs = String(format: "%08x", nc)
                let cnonce = fixedCNonce ?? String(format: "%08x", UInt32.random(in: 0...UInt32.max))
                h +=
                    ", qop=\(qop), nc=\(ncs), cnonce=\"\(cnonce)\", response=\"\(md5("\(ha1):\(d.nonce):\(ncs):\(cnonce):\(qop):\(ha2)"))\""
            } else {
                h += ", response=\"\(md5("\(ha1):\(d.nonce):\(ha2)"))\""
            }
            if let o = d.opaque { h += ", opaque=\"\(o)\"" }
            return h
        }
        if basic { return "Basic " + Data("\(user):\(password)".utf8).base64EncodedString() }
        return nil
    }

    private func md5(_ s: String) -> String {
        Insecure.MD5.hash(data: Data(s.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// key="value", key=value pairs of a challenge.
    static func params(_ s: String) -> [String: String] {
        var out: [String: String] = [:]
        var rest = Substring(s)
        while !rest.isEmpty {
            rest = rest.drop { $0 == " " || $0 == "," }
            guard let eq = rest.firstIndex(of: "=") else { break }
            let key = rest[..<eq].trimmingCharacters(in: .whitespaces).lowercased()
            rest = rest[rest.index(after: eq)...]
            var value: Substring
            if rest.first == "\"" {
                rest = rest.dropFirst()
                let close = rest.firstIndex(of: "\"") ?? rest.endIndex
                value = rest[..<close]
                rest = close < rest.endIndex ? rest[rest.index(after: close)...] : ""
            } else {
                let comma = rest.firstIndex(of: ",") ?? rest.endIndex
                value = rest[..<comma]
                rest = rest[comma...]
            }
            out[key] = String(value).trimmingCharacters(in: .whitespaces)
        }
        return out
    }
}
