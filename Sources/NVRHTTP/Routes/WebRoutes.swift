import Foundation
import HTTPTypes
import Hummingbird

/// One embedded file of the page.
struct Asset: Sendable {
    let type: String
    /// A strong validator from the content: a reload costs a 304.
    let etag: String
    let base64: String
    var bytes: [UInt8] { [UInt8](Data(base64Encoded: base64, options: .ignoreUnknownCharacters) ?? Data()) }
}

struct WebRoutes: APIRoutes {
    /// GET /api/openapi.json (public), GET / and /app/{file}: the page, from files embedded in the binary (web/ in the
    /// repository). Public — the page itself asks for a login — and locked down with a
    /// content security policy (same origin only, no inline script).
    func register(on router: Router<NVRContext>) {
        router.get("/api/openapi.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.json)))
        }
        let files = WebAssets.files.mapValues { (asset: $0, bytes: $0.bytes) }
        let page: @Sendable (Request, String) throws -> Response = { r, name in
            guard let f = files[name] else { throw APIError.notFound("no file \(name.prefix(64))") }
            var headers: HTTPFields = [.contentType: f.asset.type, .eTag: f.asset.etag, .cacheControl: "no-cache"]
            headers[HTTPField.Name("Content-Security-Policy")!] =
                "default-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; connect-src 'self'; style-src 'self'; script-src 'self'; frame-ancestors 'none'"
            headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
            headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
            if let inm = r.headers[.ifNoneMatch],
                inm.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == f.asset.etag })
            {
                return Response(status: .notModified, headers: headers)
            }
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: f.bytes)))
        }
        router.get("/") { r, _ in try page(r, "index.html") }
        router.get("/app/{file}") { r, c in try page(r, c.parameters.get("file") ?? "") }
    }
}
