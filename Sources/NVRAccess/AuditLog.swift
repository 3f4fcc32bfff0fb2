import Foundation
import NVRIndex
import NVRTime

/// Every change made through the API or the CLI, written to the index: who, what, when, from
/// where. Details are redacted of secrets before they are written.
public struct AuditLog: Sendable {
    public let index: any AccessStore
    public init(index: any AccessStore) { self.index = index }

    public func record(
        _ who: String, _ action: String, target: String? = nil, detail: [String: String] = [:], address: String? = nil
    ) {
        var d = detail
        for (k, v) in d where Secrets.isSecretKey(k) { d[k] = v.isEmpty ? "" : "***" }
        for (k, v) in d where v.contains("://") { d[k] = Secrets.redactURL(v) }
        let json =
            d.isEmpty
            ? nil
            : (try? JSONSerialization.data(withJSONObject: d, options: [.sortedKeys])).map {
                String(decoding: $0, as: UTF8.self)
            }
        try? index.addAudit(
            AuditRecord(
                time90k: Time90k.now(), user: who, action: action, target: target, detail: json, address: address))
    }

    /// The user name the CLI writes to the audit log: "cli:<login>".
    public static var cliUser: String {
        "cli:"
            + (ProcessInfo.processInfo.environment["SUDO_USER"] ?? ProcessInfo.processInfo.environment["USER"] ?? "root")
    }
}
