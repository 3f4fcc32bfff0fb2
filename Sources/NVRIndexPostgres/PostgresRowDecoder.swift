import Foundation
import NVRIndex
import PostgresNIO

/// Reads a row into an index record through its Codable keys, as GRDB does for the SQLite
/// index, so both backends share one record type per table. Columns hold what the SQLite index
/// holds: integers (booleans as 0/1), doubles, text, bytes, and JSON text for arrays.
struct PostgresRowDecoder: Decoder {
    let row: PostgresRandomAccessRow
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Columns<Key>(row: row))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw IndexError("an index row is not a list")
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw IndexError("an index row is not one value")
    }

    struct Columns<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let row: PostgresRandomAccessRow
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { (0..<row.count).compactMap { Key(stringValue: row[$0].columnName) } }

        func contains(_ key: Key) -> Bool { row.contains(key.stringValue) }

        func cell(_ key: Key) throws -> PostgresCell {
            guard row.contains(key.stringValue) else { throw IndexError("index row has no column \(key.stringValue)") }
            return row[key.stringValue]
        }

        func decodeNil(forKey key: Key) throws -> Bool { try cell(key).bytes == nil }

        func value<T: PostgresDecodable>(_ type: T.Type, _ key: Key) throws -> T {
            let c = try cell(key)
            do { return try c.decode(T.self) } catch {
                throw IndexError("index column \(key.stringValue) is not a \(T.self) (\(c.dataType))")
            }
        }

        func integer<T: FixedWidthInteger>(_ type: T.Type, _ key: Key) throws -> T {
            guard let v = T(exactly: try value(Int64.self, key)) else {
                throw IndexError("index column \(key.stringValue) is out of range for \(T.self)")
            }
            return v
        }

        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try value(Int64.self, key) != 0 }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try value(String.self, key) }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try value(Double.self, key) }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try value(Double.self, key)) }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(Int.self, key) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(Int8.self, key) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(Int16.self, key) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(Int32.self, key) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try value(Int64.self, key) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(UInt.self, key) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(UInt8.self, key) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(UInt16.self, key) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(UInt32.self, key) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(UInt64.self, key) }

        /// Bytes, string-valued enums, and JSON text for anything else (arrays), as GRDB
        /// stores them.
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            switch type {
            case is Data.Type: if let v = try value(Data.self, key) as? T { return v }
            case is Int64.Type: if let v = try value(Int64.self, key) as? T { return v }
            case is Int.Type: if let v = try integer(Int.self, key) as? T { return v }
            case is Bool.Type: if let v = try decode(Bool.self, forKey: key) as? T { return v }
            case is Double.Type: if let v = try value(Double.self, key) as? T { return v }
            default: break
            }
            let text = try value(String.self, key)
            if let v = try? T(from: TextDecoder(text: text)) { return v }
            do { return try JSONDecoder().decode(T.self, from: Data(text.utf8)) } catch {
                throw IndexError("index column \(key.stringValue) does not hold a \(T.self)")
            }
        }

        func nestedContainer<N: CodingKey>(keyedBy type: N.Type, forKey key: Key) throws -> KeyedDecodingContainer<N> {
            throw IndexError("index column \(key.stringValue) is not a row")
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw IndexError("index column \(key.stringValue) is not a list")
        }
        func superDecoder() throws -> any Decoder { throw IndexError("index rows have no super") }
        func superDecoder(forKey key: Key) throws -> any Decoder { throw IndexError("index rows have no super") }
    }

    /// One text column as a single value: what a String-backed enum decodes from.
    struct TextDecoder: Decoder, SingleValueDecodingContainer {
        let text: String
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }
        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            throw IndexError("text is not a row")
        }
        func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw IndexError("text is not a list") }
        func singleValueContainer() throws -> any SingleValueDecodingContainer { self }
        func decodeNil() -> Bool { false }
        func decode(_ type: String.Type) throws -> String { text }
        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            guard let v = text as? T else { throw IndexError("text is not a \(T.self)") }
            return v
        }
        func decode(_ type: Bool.Type) throws -> Bool { throw IndexError("text is not a Bool") }
        func decode(_ type: Double.Type) throws -> Double { throw IndexError("text is not a number") }
        func decode(_ type: Float.Type) throws -> Float { throw IndexError("text is not a number") }
        func decode(_ type: Int.Type) throws -> Int { throw IndexError("text is not a number") }
        func decode(_ type: Int8.Type) throws -> Int8 { throw IndexError("text is not a number") }
        func decode(_ type: Int16.Type) throws -> Int16 { throw IndexError("text is not a number") }
        func decode(_ type: Int32.Type) throws -> Int32 { throw IndexError("text is not a number") }
        func decode(_ type: Int64.Type) throws -> Int64 { throw IndexError("text is not a number") }
        func decode(_ type: UInt.Type) throws -> UInt { throw IndexError("text is not a number") }
        func decode(_ type: UInt8.Type) throws -> UInt8 { throw IndexError("text is not a number") }
        func decode(_ type: UInt16.Type) throws -> UInt16 { throw IndexError("text is not a number") }
        func decode(_ type: UInt32.Type) throws -> UInt32 { throw IndexError("text is not a number") }
        func decode(_ type: UInt64.Type) throws -> UInt64 { throw IndexError("text is not a number") }
    }
}
