import Foundation

/// One element of a parsed XML document, by local name: ONVIF answers name the same
/// namespaces with different prefixes from camera to camera (`tt:`, `onvif:`, `ns2:`), so
/// lookups ignore the prefix.
public struct XMLNode: Sendable, Equatable {
    /// Local name (no prefix).
    public var name: String
    /// Attributes by local name.
    public var attributes: [String: String]
    /// The element's own text (CDATA included), entities decoded, not trimmed.
    public var text: String
    public var children: [XMLNode]

    public init(name: String, attributes: [String: String] = [:], text: String = "", children: [XMLNode] = []) {
        self.name = name
        self.attributes = attributes
        self.text = text
        self.children = children
    }

    /// The text, trimmed of surrounding white space.
    public var value: String { text.trimmingCharacters(in: .whitespacesAndNewlines) }

    /// The first direct child named `name`.
    public func child(_ name: String) -> XMLNode? { children.first { $0.name == name } }

    /// The first element named `name` at or below this one (depth first, document order).
    public func first(_ name: String) -> XMLNode? {
        if self.name == name { return self }
        for c in children { if let f = c.first(name) { return f } }
        return nil
    }

    /// Every element named `name` below this one, in document order (not inside a match).
    public func all(_ name: String) -> [XMLNode] {
        var out: [XMLNode] = []
        for c in children {
            if c.name == name { out.append(c) } else { out += c.all(name) }
        }
        return out
    }

    /// The trimmed text of the element reached by following `path` from here (each step the
    /// first match at any depth below the previous one).
    public func text(_ path: String...) -> String? {
        var node = self
        for step in path {
            guard let n = node.children.lazy.compactMap({ $0.first(step) }).first else { return nil }
            node = n
        }
        return node.value
    }
}
