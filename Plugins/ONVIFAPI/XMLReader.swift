import Foundation

/// A small, strict XML reader for SOAP answers from cameras: elements, attributes, text,
/// CDATA, comments and processing instructions. No DTDs (a `<!DOCTYPE` is refused, so no
/// entity expansion or external fetches), bounded depth and size: every byte comes from a
/// device on the network. Namespace prefixes are dropped (see XMLNode).
public enum XMLReader {
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
        init(_ m: String) { description = "not well-formed XML: \(m)" }
    }

    public static let maxBytes = 8 << 20
    public static let maxDepth = 64
    public static let maxElements = 200_000

    public static func parse(_ data: Data) throws -> XMLNode {
        guard data.count <= maxBytes else { throw Failure("over \(maxBytes >> 20) MiB") }
        return try data.withUnsafeBytes { raw in
            var r = Reader(bytes: raw.bindMemory(to: UInt8.self))
            return try r.document()
        }
    }

    public static func parse(_ text: String) throws -> XMLNode { try parse(Data(text.utf8)) }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var i = 0
        var elements = 0

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        func peek(_ s: StaticString) -> Bool {
            let n = s.utf8CodeUnitCount
            guard i + n <= bytes.count else { return false }
            let p = s.utf8Start
            for k in 0..<n where bytes[i + k] != p[k] { return false }
            return true
        }

        mutating func skip(past s: StaticString, what: String) throws {
            while i < bytes.count {
                if peek(s) {
                    i += s.utf8CodeUnitCount
                    return
                }
                i += 1
            }
            throw Failure("unterminated \(what)")
        }

        static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }
        static func isNameByte(_ b: UInt8) -> Bool {
            b >= 0x80 || (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                || b == 0x3A || b == 0x5F || b == 0x2D || b == 0x2E
        }

        mutating func skipSpace() { while i < bytes.count && Self.isSpace(bytes[i]) { i += 1 } }

        mutating func name() throws -> String {
            let start = i
            while i < bytes.count && Self.isNameByte(bytes[i]) { i += 1 }
            guard i > start else { throw Failure("a name was expected at byte \(start)") }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
        }

        static func local(_ qualified: String) -> String {
            guard let colon = qualified.lastIndex(of: ":") else { return qualified }
            return String(qualified[qualified.index(after: colon)...])
        }

        /// Skips what may stand outside or between elements: white space, comments, `<?…?>`.
        mutating func skipMisc() throws {
            while true {
                skipSpace()
                if peek("<?") {
                    try skip(past: "?>", what: "processing instruction")
                } else if peek("<!--") {
                    try skip(past: "-->", what: "comment")
                } else {
                    return
                }
            }
        }

        mutating func document() throws -> XMLNode {
            if peek("\u{FEFF}") { i += 3 }
            try skipMisc()
            if peek("<!") { throw Failure("DTDs are not accepted") }
            guard i < bytes.count, bytes[i] == UInt8(ascii: "<") else { throw Failure("no root element") }
            let root = try element(depth: 0)
            try skipMisc()
            guard i == bytes.count else { throw Failure("content after the root element") }
            return root
        }

        /// An element starting at `<`.
        mutating func element(depth: Int) throws -> XMLNode {
            guard depth < XMLReader.maxDepth else { throw Failure("nested deeper than \(XMLReader.maxDepth)") }
            elements += 1
            guard elements <= XMLReader.maxElements else {
                throw Failure("more than \(XMLReader.maxElements) elements")
            }
            i += 1  // <
            let qname = try name()
            var node = XMLNode(name: Self.local(qname))
            while true {
                skipSpace()
                guard i < bytes.count else { throw Failure("unterminated tag <\(qname)>") }
                if peek("/>") {
                    i += 2
                    return node
                }
                if bytes[i] == UInt8(ascii: ">") {
                    i += 1
                    break
                }
                let attr = try name()
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: "=") else {
                    throw Failure("attribute \(attr) without a value")
                }
                i += 1
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") || bytes[i] == UInt8(ascii: "'") else {
                    throw Failure("attribute \(attr) value not quoted")
                }
                let quote = bytes[i]
                i += 1
                let start = i
                while i < bytes.count && bytes[i] != quote { i += 1 }
                guard i < bytes.count else { throw Failure("unterminated attribute \(attr)") }
                node.attributes[Self.local(attr)] = Self.decode(UnsafeBufferPointer(rebasing: bytes[start..<i]))
                i += 1
            }
            // Content.
            var text = ""
            while true {
                guard i < bytes.count else { throw Failure("<\(qname)> is not closed") }
                if peek("</") {
                    i += 2
                    let closing = try name()
                    skipSpace()
                    guard closing == qname, i < bytes.count, bytes[i] == UInt8(ascii: ">") else {
                        throw Failure("</\(closing)> closes <\(qname)>")
                    }
                    i += 1
                    node.text = text
                    return node
                }
                if peek("<![CDATA[") {
                    i += 9
                    let start = i
                    try skip(past: "]]>", what: "CDATA")
                    text += String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<(i - 3)]), as: UTF8.self)
                } else if peek("<!--") {
                    try skip(past: "-->", what: "comment")
                } else if peek("<?") {
                    try skip(past: "?>", what: "processing instruction")
                } else if peek("<!") {
                    throw Failure("DTDs are not accepted")
                } else if bytes[i] == UInt8(ascii: "<") {
                    node.children.append(try element(depth: depth + 1))
                } else {
                    let start = i
                    while i < bytes.count && bytes[i] != UInt8(ascii: "<") { i += 1 }
                    text += Self.decode(UnsafeBufferPointer(rebasing: bytes[start..<i]))
                }
            }
        }

        static let namedEntities: [Substring: String] = ["lt": "<", "gt": ">", "amp": "&", "quot": "\"", "apos": "'"]

        /// Text with the five predefined entities and character references decoded; anything
        /// else that looks like an entity is kept as written.
        static func decode(_ raw: UnsafeBufferPointer<UInt8>) -> String {
            let s = String(decoding: raw, as: UTF8.self)
            guard s.contains("&") else { return s }
            var out = ""
            var rest = Substring(s)
            while let amp = rest.firstIndex(of: "&") {
                out += rest[..<amp]
                let after = rest[amp...]
                guard let semi = after.prefix(12).firstIndex(of: ";") else {
                    out += "&"
                    rest = rest[rest.index(after: amp)...]
                    continue
                }
                let entity = after[after.index(after: after.startIndex)..<semi]
                if let v = Self.namedEntities[entity] {
                    out += v
                } else if entity.hasPrefix("#x") || entity.hasPrefix("#X"),
                    let n = UInt32(entity.dropFirst(2), radix: 16), let u = Unicode.Scalar(n)
                {
                    out.unicodeScalars.append(u)
                } else if entity.hasPrefix("#"), let n = UInt32(entity.dropFirst()), let u = Unicode.Scalar(n) {
                    out.unicodeScalars.append(u)
                } else {
                    out += after[...semi]
                }
                rest = rest[rest.index(after: semi)...]
            }
            return out + rest
        }
    }
}
