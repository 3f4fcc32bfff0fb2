import Foundation
import Insta360API
import PluginSupport

/// Speaks OSC to one camera: the required headers on every request, one `/osc/commands/*`
/// request at a time, and `execute` + `status` polling for commands that run a while.
final class OSCClient: @unchecked Sendable {
    // @unchecked Sendable: immutable apart from `commandLock`, which serialises commands.
    let baseURL: String
    private let http: HTTPClient
    private let timeout: Double
    /// Seconds between `camera/status` polls of an in-progress command.
    let pollSeconds: Double
    /// Held for each /osc/commands/* request: the camera takes one at a time.
    private let commandLock = NSLock()

    init(baseURL: String, timeout: Double, pollSeconds: Double = 1) {
        self.baseURL = baseURL
        self.timeout = timeout
        self.pollSeconds = pollSeconds
        http = HTTPClient(timeout: timeout)
    }

    /// POST (or GET without a body) to an OSC endpoint; the JSON answer as data. HTTP errors
    /// carrying an OSC error body become that OSCError; others name the status.
    func request(_ path: String, body: [String: Any]?, what: String, timeout extra: Double = 0) throws -> Data {
        let client = extra > 0 ? HTTPClient(timeout: timeout + extra) : http
        let data = try body.map { try JSONSerialization.data(withJSONObject: $0) }
        let r: HTTPClient.Response
        do {
            r = try client.fetch(
                baseURL + path, method: data == nil ? "GET" : "POST", headers: OSC.requestHeaders, body: data)
        } catch {
            throw OSCError(code: "unreachable", message: "camera unreachable at \(baseURL) (\(what)): \(error)")
        }
        guard r.status == 200 else {
            if let o = try? OSC.object(r.body, from: what), let e = o["error"] as? [String: Any],
                let code = e["code"] as? String
            {
                throw OSCError(code: code, message: "\(what): \(e["message"] as? String ?? "")")
            }
            let detail = r.text.trimmingCharacters(in: .whitespacesAndNewlines).prefix(120)
            throw OSCError(
                code: "http\(r.status)",
                message: "camera answered HTTP \(r.status) to \(what)\(detail.isEmpty ? "" : ": \(detail)")")
        }
        return r.body
    }

    /// Runs a command to completion: `execute`, then `status` every `pollSeconds` while it is
    /// in progress, up to `wait` seconds. Returns its results; an OSC error is thrown.
    func execute(_ name: String, _ parameters: [String: Any] = [:], wait: Double = 30) throws -> [String: Any] {
        var result = try command("/osc/commands/execute", ["name": name, "parameters": parameters], what: name)
        let deadline = Date(timeIntervalSinceNow: wait)
        while result.state == .inProgress, let id = result.id {
            guard Date() < deadline else {
                throw OSCError(code: "timeout", message: "\(name) still in progress after \(Int(wait)) s")
            }
            Thread.sleep(forTimeInterval: pollSeconds)
            result = try command("/osc/commands/status", ["id": id], what: "\(name) status")
        }
        if let e = result.error ?? (result.state == .error ? OSCError(code: "unknown", message: name) : nil) {
            throw OSCError(
                code: e.code,
                message: e.message.isEmpty || e.message.hasPrefix(name) ? e.message : "\(name): \(e.message)")
        }
        return result.results
    }

    private func command(_ path: String, _ body: [String: Any], what: String) throws -> OSCCommandResult {
        commandLock.lock()
        defer { commandLock.unlock() }
        let data = try request(path, body: body, what: what)
        return try OSCCommandResult(json: data, command: what)
    }

    /// Streams a byte range of a file the camera serves (card files) to `sink`.
    func readFile(path: String, offset: Int64, length: Int64, sink: (UnsafeRawBufferPointer) -> Bool) throws -> Bool {
        let encoded = path.split(separator: "/").map {
            $0.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? String($0)
        }
        return try http.readRange(
            baseURL + "/" + encoded.joined(separator: "/"), offset: offset, length: length, sink: sink)
    }
}
