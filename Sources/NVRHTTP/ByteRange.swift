/// One HTTP byte range (RFC 9110 §14.1.2) resolved against a body size.
package struct ByteRange: Equatable {
    package var first: Int64
    package var last: Int64
    package var count: Int64 { last - first + 1 }

    package enum Parsed: Equatable {
        /// No Range header, a form we don't serve (several ranges), or not bytes: send it all.
        case whole
        case range(ByteRange)
        /// Syntactically a byte range but outside the body: 416.
        case unsatisfiable
    }

    package static func parse(_ header: String?, size: Int64) -> Parsed {
        guard let header else { return .whole }
        let h = header.trimmingCharacters(in: .whitespaces)
        guard h.lowercased().hasPrefix("bytes=") else { return .whole }
        let spec = h.dropFirst(6).trimmingCharacters(in: .whitespaces)
        guard !spec.contains(",") else { return .whole }  // multipart/byteranges is not worth it for video
        guard let dash = spec.firstIndex(of: "-") else { return .unsatisfiable }
        let a = spec[..<dash].trimmingCharacters(in: .whitespaces)
        let b = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)
        if a.isEmpty {
            // Suffix: the last N bytes.
            guard let n = Int64(b), n > 0, size > 0 else { return .unsatisfiable }
            return .range(ByteRange(first: max(size - n, 0), last: size - 1))
        }
        guard let first = Int64(a), first >= 0 else { return .unsatisfiable }
        guard first < size else { return .unsatisfiable }
        if b.isEmpty { return .range(ByteRange(first: first, last: size - 1)) }
        guard let last = Int64(b), last >= first else { return .unsatisfiable }
        return .range(ByteRange(first: first, last: min(last, size - 1)))
    }
}
