import Foundation

/// A JSON field that may be left out (no change: nil), null (clear) or a value (set).
enum Patch<T: Decodable & Sendable>: Sendable {
    case null
    case value(T)
    var value: T? { if case .value(let v) = self { return v } else { return nil } }
}

extension KeyedDecodingContainer {
    /// nil when the key is absent, .null for JSON null, else the value (synthesized Decodable
    /// cannot tell absent from null).
    func patch<T: Decodable & Sendable>(_ key: Key) throws -> Patch<T>? {
        guard contains(key) else { return nil }
        return try decodeNil(forKey: key) ? .null : .value(decode(T.self, forKey: key))
    }
}
