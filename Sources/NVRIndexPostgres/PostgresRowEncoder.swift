import Foundation
import NVRIndex

/// A record's columns as values to bind, through its Codable keys (the counterpart of
/// PostgresRowDecoder). nil is written as NULL, not left out, so an update clears a column
/// (the default `encodeIfPresent` skips nils, hence the overloads below).
final class PostgresRowEncoder: Encoder {
    struct Column {
        var name: String
        var value: PostgresValue
        var isNull: Bool { if case .null = value { true } else { false } }
    }

    var columns: [Column] = []
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    static func columns(of record: some Encodable) throws -> [Column] {
        let e = PostgresRowEncoder()
        try record.encode(to: e)
        return e.columns
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(Columns<Key>(encoder: self))
    }
    func unkeyedContainer() -> any UnkeyedEncodingContainer { Refusal.list }
    func singleValueContainer() -> any SingleValueEncodingContainer { Refusal.value }

    /// A record is a row: no top-level lists or single values (they fail at the first write).
    enum Refusal: UnkeyedEncodingContainer, SingleValueEncodingContainer {
        case list, value
        var codingPath: [any CodingKey] { [] }
        var count: Int { 0 }
        func encodeNil() throws { throw IndexError("an index record must be a row") }
        func encode<T: Encodable>(_ value: T) throws { throw IndexError("an index record must be a row") }
        func nestedContainer<K: CodingKey>(keyedBy keyType: K.Type) -> KeyedEncodingContainer<K> {
            KeyedEncodingContainer(Columns<K>(encoder: PostgresRowEncoder()))
        }
        func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
        func superEncoder() -> any Encoder { PostgresRowEncoder() }
    }

    struct Columns<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let encoder: PostgresRowEncoder
        var codingPath: [any CodingKey] { [] }

        func put(_ key: Key, _ value: PostgresValue) {
            encoder.columns.append(Column(name: key.stringValue, value: value))
        }

        mutating func encodeNil(forKey key: Key) throws { put(key, .null) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { put(key, PostgresValue(value)) }
        mutating func encode(_ value: String, forKey key: Key) throws { put(key, .text(value)) }
        mutating func encode(_ value: Double, forKey key: Key) throws { put(key, .double(value)) }
        mutating func encode(_ value: Float, forKey key: Key) throws { put(key, .double(Double(value))) }
        mutating func encode(_ value: Int, forKey key: Key) throws { put(key, .int(Int64(value))) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { put(key, .int(Int64(value))) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { put(key, .int(Int64(value))) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { put(key, .int(Int64(value))) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { put(key, .int(value)) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { try put(key, .int(Self.exact(value, key))) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { put(key, .int(Int64(value))) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { put(key, .int(Int64(value))) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { put(key, .int(Int64(value))) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { try put(key, .int(Self.exact(value, key))) }

        static func exact(_ v: some BinaryInteger, _ key: Key) throws -> Int64 {
            guard let i = Int64(exactly: v) else { throw IndexError("\(key.stringValue) is too large for the index") }
            return i
        }

        /// Bytes as bytes, string-valued enums as text, anything else (arrays) as JSON text.
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            // `some` reaches here for every optional, numbers included.
            switch value {
            case let v as Data: return put(key, .bytes(v))
            case let v as String: return put(key, .text(v))
            case let v as Int64: return put(key, .int(v))
            case let v as Int: return put(key, .int(Int64(v)))
            case let v as Int32: return put(key, .int(Int64(v)))
            case let v as Bool: return put(key, PostgresValue(v))
            case let v as Double: return put(key, .double(v))
            case let v as Float: return put(key, .double(Double(v)))
            default: break
            }
            let single = SingleValue()
            if (try? value.encode(to: single)) != nil, let text = single.text { return put(key, .text(text)) }
            let json = try JSONEncoder().encode(value)
            put(key, .text(String(decoding: json, as: UTF8.self)))
        }

        mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try some(value, key) }
        mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try some(value, key) }
        mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try some(value, key) }
        mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try some(value, key) }
        mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try some(value, key) }
        mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try some(value, key) }
        mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try some(value, key) }
        mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try some(value, key) }
        mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try some(value, key) }
        mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try some(value, key) }
        mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try some(value, key) }
        mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try some(value, key) }
        mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try some(value, key) }
        mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try some(value, key) }
        mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws { try some(value, key) }

        mutating func some<T: Encodable>(_ value: T?, _ key: Key) throws {
            if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
        }

        mutating func nestedContainer<N: CodingKey>(keyedBy keyType: N.Type, forKey key: Key)
            -> KeyedEncodingContainer<N>
        {
            KeyedEncodingContainer(Columns<N>(encoder: PostgresRowEncoder()))
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { Refusal.list }
        mutating func superEncoder() -> any Encoder { PostgresRowEncoder() }
        mutating func superEncoder(forKey key: Key) -> any Encoder { PostgresRowEncoder() }
    }

    /// Catches a value that encodes itself as one string (a String-backed enum).
    final class SingleValue: Encoder, SingleValueEncodingContainer {
        var text: String?
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }
        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(Columns<Key>(encoder: PostgresRowEncoder()))
        }
        func unkeyedContainer() -> any UnkeyedEncodingContainer { Refusal.list }
        func singleValueContainer() -> any SingleValueEncodingContainer { self }
        func encodeNil() throws { throw IndexError("not text") }
        func encode(_ value: String) throws { text = value }
        func encode<T: Encodable>(_ value: T) throws { throw IndexError("not text") }
    }
}
