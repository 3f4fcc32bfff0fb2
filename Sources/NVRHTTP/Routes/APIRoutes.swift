import Foundation
import Hummingbird
import NVRAccess
import NVRIndex

/// One resource's routes, holding only what they need; `API` adds each group to the router.
protocol APIRoutes: Sendable {
    func register(on router: Router<NVRContext>)
}

/// Routes that find cameras (and who may see them) in the index.
protocol IndexedRoutes: APIRoutes {
    var index: any IndexStore { get }
}

extension APIRoutes {
    /// Who is asking (AccessMiddleware has already refused requests without a user).
    func identity(_ c: NVRContext) throws -> Identity {
        guard let who = c.identity else { throw APIError(.unauthorized, "unauthorized", "log in first") }
        return who
    }

    /// The identity of an admin, or 403.
    @discardableResult
    func admin(_ c: NVRContext) throws -> Identity {
        let who = try identity(c)
        guard who.isAdmin else {
            throw APIError(.forbidden, "forbidden", "only an admin may do this (\(who.name) is a \(who.role.rawValue))")
        }
        return who
    }

    /// A JSON request body: `Content-Type: application/json` is required (a form on another
    /// site cannot send it without asking first), and malformed JSON is a 400 that says where.
    func decode<T: Decodable>(_ type: T.Type, _ r: Request, _ c: NVRContext) async throws -> T {
        guard r.headers[.contentType]?.lowercased().hasPrefix("application/json") == true else {
            throw APIError(
                .unsupportedMediaType, "unsupported_media_type",
                "send the body as JSON with Content-Type: application/json")
        }
        let buffer: ByteBuffer
        do { buffer = try await r.body.collect(upTo: c.maxUploadSize) } catch {
            throw APIError(.contentTooLarge, "too_large", "the body is larger than \(c.maxUploadSize / 1024) KB")
        }
        do { return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView)) } catch let e
            as DecodingError
        {
            throw APIError.badRequest("the body is not the JSON this call takes: \(describe(e))")
        }
    }

    func describe(_ e: DecodingError) -> String {
        switch e {
        case .keyNotFound(let k, _): return "\"\(k.stringValue)\" is missing"
        case .typeMismatch(_, let ctx), .valueNotFound(_, let ctx):
            return "\"\(ctx.codingPath.map(\.stringValue).joined(separator: "."))\" has the wrong type"
        case .dataCorrupted(let ctx):
            return ctx.codingPath.isEmpty
                ? "not JSON" : "\"\(ctx.codingPath.map(\.stringValue).joined(separator: "."))\" is invalid"
        @unknown default: return "invalid"
        }
    }
}

extension IndexedRoutes {
    /// The camera named in the path, or 404 (also for a camera this user may not see).
    func camera(_ context: NVRContext) async throws -> CameraRecord {
        let who = try identity(context)
        let name = context.parameters.get("name") ?? ""
        guard who.mayView(camera: name), let cam = try await offload({ [index] in try index.camera(named: name) })
        else {
            throw APIError.notFound("no camera named '\(name.prefix(64))'")
        }
        return cam
    }

    /// The camera named in the path, for a user `allowed` to do `what` to it ("turn or zoom"),
    /// else 403. The right is checked before the camera is looked up, so a viewer learns
    /// nothing of cameras it may not see (the right includes seeing the camera).
    func camera(_ context: NVRContext, allowed: (Identity, String) -> Bool, to what: String) async throws
        -> CameraRecord
    {
        let who = try identity(context)
        let name = context.parameters.get("name") ?? ""
        guard allowed(who, name) else {
            throw APIError(
                .forbidden, "forbidden",
                "\(who.name) may not \(what) \(name.prefix(64)) (an admin can allow it for the cameras a viewer sees)")
        }
        return try await camera(context)
    }
}
