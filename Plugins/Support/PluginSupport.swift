import CNVRPlugin
import Foundation

/// Helpers every camera plugin needs to speak the C ABI. Linked statically into each plugin;
/// none of these types ever crosses into the host.

/// A C string the host will free with the plugin's free_string (strdup/free).
public func makeCString(_ s: String) -> UnsafeMutablePointer<CChar> { strdup(s)! }

/// The free_string every plugin exports.
public let freeCString: @convention(c) (UnsafeMutablePointer<CChar>?) -> Void = { free($0) }

/// A string that lives as long as the process (for the static entry description).
public func staticCString(_ s: String) -> UnsafePointer<CChar> { UnsafePointer(strdup(s)!) }

/// Reads a camera's JSON config with clear errors; numbers and booleans may also be given as strings
/// (the CLI's --option key=value stores strings).
public struct PluginConfig {
    public let values: [String: Any]

    public init(json: String, allowed: Set<String>) throws {
        guard let obj = try? JSONSerialization.jsonObject(with: Data(json.utf8)), let dict = obj as? [String: Any]
        else {
            throw PluginConfigError("config is not a JSON object")
        }
        for k in dict.keys where !allowed.contains(k) {
            throw PluginConfigError("unknown option '\(k)' (known: \(allowed.sorted().joined(separator: ", ")))")
        }
        values = dict
    }

    public func string(_ key: String) throws -> String? {
        guard let v = values[key] else { return nil }
        if let s = v as? String { return s }
        throw PluginConfigError("option '\(key)' must be a string")
    }

    public func int(_ key: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let v = values[key] else { return nil }
        let n: Int?
        if let s = v as? String { n = Int(s) } else if let d = v as? NSNumber { n = d.intValue } else { n = nil }
        guard let n, range.contains(n) else {
            throw PluginConfigError("option '\(key)' must be a whole number in \(range.lowerBound)…\(range.upperBound)")
        }
        return n
    }

    public func bool(_ key: String) throws -> Bool? {
        guard let v = values[key] else { return nil }
        if let s = v as? String {
            switch s.lowercased() {
            case "true", "yes", "1": return true
            case "false", "no", "0": return false
            default: break
            }
        } else if let b = v as? Bool {
            return b
        }
        throw PluginConfigError("option '\(key)' must be true or false")
    }
}

public struct PluginConfigError: Error, CustomStringConvertible {
    public let description: String
    public init(_ m: String) { description = m }
}

/// The host's callbacks, copied at create time.
public struct PluginHostCallbacks: @unchecked Sendable {
    // @unchecked Sendable: the ABI says host callbacks may be called from any thread.
    public let table: nvr_host_v1

    public init(_ p: UnsafePointer<nvr_host_v1>) { table = p.pointee }

    public func log(_ level: nvr_log_level, _ message: String) {
        table.log?(table.host_ctx, Int32(level.rawValue), message)
    }
    public func state(_ s: nvr_connection_state, _ reason: String? = nil) {
        if let reason {
            table.connection_state?(table.host_ctx, Int32(s.rawValue), reason)
        } else {
            table.connection_state?(table.host_ctx, Int32(s.rawValue), nil)
        }
    }
    public func event(_ json: String) { table.event?(table.host_ctx, json) }
}

/// Turns a create() failure into the ABI's error string.
public func reportError(_ error: any Error, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) {
    out?.pointee = makeCString("\(error)")
}

/// JSON text of an object (sorted keys, no escaped slashes) for live_source and status.
public func jsonText(_ obj: [String: Any]) -> String {
    (try? JSONSerialization.data(withJSONObject: obj, options: [.sortedKeys, .withoutEscapingSlashes]))
        .map { String(decoding: $0, as: UTF8.self) } ?? "{}"
}

/// Reads a camera clock that only gives whole seconds to well under a second: reads it until
/// the second changes, which is the moment of the tick (within one poll and one request).
/// `read` returns the clock in seconds; the result is the clock at the moment this returns.
/// A clock that does not tick within `maxWait` (or fails meanwhile) gives its first reading
/// plus half a second, the middle of the second it named.
public func preciseCameraClock(pollInterval: Double = 0.05, maxWait: Double = 1.5, read: () throws -> Double) throws
    -> Double
{
    let first = try read()
    let firstAt = Date()
    let deadline = firstAt.addingTimeInterval(maxWait)
    var askedAt = Date()
    while Date() < deadline {
        Thread.sleep(forTimeInterval: pollInterval)
        let previousAsk = askedAt
        askedAt = Date()
        guard let v = try? read() else { break }
        let answeredAt = Date()
        if v > first {
            // The tick fell between the previous answer and this one: take the middle.
            let tickAt = previousAsk.addingTimeInterval(answeredAt.timeIntervalSince(previousAsk) / 2)
            return v + Date().timeIntervalSince(tickAt)
        }
    }
    return first + 0.5 + Date().timeIntervalSince(firstAt)
}
