import Foundation

/// The request-and-answer side of an RTSP connection, shared by the recording client
/// (RTSPClient) and the audio back-channel (RTSPBackChannel): numbered requests with the
/// camera's authentication, one challenge answered per request, and answers read with bounds
/// (interleaved packets that arrive before an answer are skipped).
protocol RTSPConversation: AnyObject {
    var url: RTSPURL { get }
    var socket: BufferedSocket { get }
    var auth: RTSPAuthenticator? { get set }
    var cseq: Int { get set }
}

/// Largest RTSP answer head and body a client takes (an SDP is a few KB).
enum RTSPLimits {
    static let maxHead = 64 * 1024
    static let maxBody = 64 * 1024
}

extension RTSPConversation {
    /// A SETUP answer's Session header: the id, and its timeout when it gives a sane one
    /// (RFC 2326: seconds; anything else keeps the default).
    static func session(_ header: String?) -> (id: String?, timeout: Double?) {
        guard let header else { return (nil, nil) }
        let parts = header.split(separator: ";")
        let id = parts.first.map { String($0).trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
        var timeout: Double?
        for p in parts.dropFirst() {
            let kv = p.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard kv.count == 2, kv[0].trimmingCharacters(in: .whitespaces).lowercased() == "timeout" else { continue }
            if let t = Double(kv[1].trimmingCharacters(in: .whitespaces)), t.isFinite, t >= 1, t <= 86_400 {
                timeout = t
            }
        }
        return (id, timeout)
    }

    func request(_ method: String, _ uri: String, _ headers: [String: String]) -> String {
        cseq += 1
        var s = "\(method) \(uri) RTSP/1.0\r\nCSeq: \(cseq)\r\nUser-Agent: nvr\r\n"
        for (k, v) in headers { s += "\(k): \(v)\r\n" }
        if var a = auth, let h = a.header(method: method, uri: uri) {
            s += "Authorization: \(h)\r\n"
            auth = a
        }
        return s + "\r\n"
    }

    /// Sends a request and returns its response, answering one authentication challenge.
    func exchange(_ method: String, _ uri: String, _ headers: [String: String]) throws -> RTSPResponse {
        for attempt in 0..<2 {
            try socket.write(request(method, uri, headers))
            let r = try readResponse()
            if r.status == 401 {
                guard attempt == 0, var a = auth, let challenge = r["www-authenticate"] else {
                    throw MediaError(
                        .open,
                        auth == nil
                            ? "authorization required (give a user and password)"
                            : "authorization failed (wrong user or password)",
                        code: 401)
                }
                let challenges = r.headers.filter { $0.key == "www-authenticate" }.map(\.value) + [challenge]
                guard challenges.contains(where: { a.challenge($0) }) else {
                    throw MediaError(
                        .unsupported, "camera asks for an authentication scheme we do not speak: \(challenge)")
                }
                auth = a
                continue
            }
            switch r.status {
            case 200..<300: return r
            case 404: throw MediaError(.open, "not found (wrong stream path?)", code: 404)
            case 403: throw MediaError(.open, "authorization failed (forbidden)", code: 403)
            default:
                throw MediaError(
                    .open, "\(method) answered \(r.status) \(r.reason.prefix(80))", code: Int32(clamping: r.status))
            }
        }
        throw MediaError(.open, "authorization failed (wrong user or password)")
    }

    /// Reads one RTSP response, skipping interleaved packets that arrive before it. The whole
    /// answer must arrive within the timeout: the deadline is not renewed by each byte.
    func readResponse() throws -> RTSPResponse {
        let deadline = Interrupter.now() + UInt64(socket.timeoutSeconds * 1e9)
        while true {
            try socket.require(1, deadline: deadline)
            if socket.peek(0) == 0x24 {  // '$': an interleaved packet before the answer
                try socket.require(4, deadline: deadline)
                let n = Int(socket.peek(2)) << 8 | Int(socket.peek(3))
                try socket.require(4 + n, deadline: deadline)
                socket.consume(4 + n)
                continue
            }
            // An answer starts with "RTSP/": anything else is not worth waiting for.
            try socket.require(5, deadline: deadline)
            guard socket.withBytes(count: 5, { $0.elementsEqual("RTSP/".utf8) }) else {
                let start = socket.withBytes(count: min(socket.available, 40)) { String(decoding: $0, as: UTF8.self) }
                throw MediaError(.corrupt, "not an RTSP answer: \(start.debugDescription)")
            }
            var scanned = 0
            var headerLength: Int?
            while true {
                headerLength = socket.headerEnd(from: scanned)
                if headerLength != nil { break }
                scanned = max(socket.available - 3, 0)
                guard socket.available <= RTSPLimits.maxHead else {
                    throw MediaError(.corrupt, "RTSP answer head longer than \(RTSPLimits.maxHead / 1024) KB")
                }
                try socket.fill(deadline: deadline)
            }
            guard let headerLength, headerLength <= RTSPLimits.maxHead else {
                throw MediaError(.corrupt, "RTSP answer head longer than \(RTSPLimits.maxHead / 1024) KB")
            }
            let head = socket.withBytes(count: headerLength) { String(decoding: $0, as: UTF8.self) }
            socket.consume(headerLength)
            let lines = head.components(separatedBy: "\r\n")
            let status = (lines.first ?? "").split(separator: " ", maxSplits: 2)
            guard status.count >= 2, status[0].hasPrefix("RTSP/"), let code = Int(status[1]), (100...999).contains(code)
            else {
                throw MediaError(.corrupt, "not an RTSP answer: \((lines.first ?? "").prefix(80))")
            }
            var headers: [String: String] = [:]
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                let name = line[..<colon].lowercased()
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                if name == "www-authenticate", let prior = headers[name] {
                    // Keep a Digest challenge in preference to Basic.
                    headers[name] = value.lowercased().hasPrefix("digest") ? value : prior
                } else {
                    headers[name] = value
                }
            }
            var length = 0
            if let text = headers["content-length"] {
                guard let n = Int(text), n >= 0 else {
                    throw MediaError(.corrupt, "Content-Length '\(text.prefix(40))' is not a length")
                }
                guard n <= RTSPLimits.maxBody else {
                    throw MediaError(
                        .corrupt, "RTSP answer body of \(n) bytes (at most \(RTSPLimits.maxBody / 1024) KB)")
                }
                length = n
            }
            try socket.require(length, deadline: deadline)
            let body = socket.withBytes(count: length) { String(decoding: $0, as: UTF8.self) }
            socket.consume(length)
            return RTSPResponse(
                status: code, reason: status.count > 2 ? String(status[2]) : "", headers: headers, body: body)
        }
    }
}
