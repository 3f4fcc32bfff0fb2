import Foundation

/// The API's paths and methods as the OpenAPI document lists them: a request for a documented
/// path with a method it does not offer is answered 405 with `Allow` (RFC 9110), not 404.
struct DocumentedRoutes: Sendable {
    private let routes: [(segments: [Substring], methods: [String])]

    init(openAPI json: String) {
        let paths =
            (try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])?["paths"]
            as? [String: [String: Any]] ?? [:]
        routes = paths.map { path, ops in
            var methods = Set(ops.keys.map { $0.uppercased() })
            if methods.contains("GET") { methods.insert("HEAD") }
            return (path.split(separator: "/"), methods.sorted())
        }
    }

    /// The methods a documented path offers, or nil when no documented path matches.
    /// `{name}` matches any one segment.
    func allowed(path: String) -> [String]? {
        let parts = path.split(separator: "/")
        var found: Set<String> = []
        for r in routes where r.segments.count == parts.count {
            if zip(r.segments, parts).allSatisfy({ $0.first == "{" || $0 == $1 }) { found.formUnion(r.methods) }
        }
        return found.isEmpty ? nil : found.sorted()
    }
}
