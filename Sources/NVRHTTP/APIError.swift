import Foundation
import Hummingbird
import NVRAccess
import NVRMedia
import NVRPlayback

/// An error answer: `{"error": code, "message": text}` with its HTTP status.
public struct APIError: HTTPResponseError, CustomStringConvertible {
    public var status: HTTPResponse.Status
    public var code: String
    public var message: String
    public var headers: HTTPFields = [:]

    public init(_ status: HTTPResponse.Status, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    public var description: String { "\(status.code) \(code): \(message)" }

    static func badRequest(_ m: String) -> APIError { APIError(.badRequest, "bad_request", m) }
    static func notFound(_ m: String) -> APIError { APIError(.notFound, "not_found", m) }
    /// A time that is malformed or outside the supported years.
    static func badTime(_ m: String) -> APIError { APIError(.badRequest, "bad_time", m) }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var h = headers
        h[.contentType] = "application/json; charset=utf-8"
        h[.cacheControl] = "no-store"
        let body = try JSON.encode(["error": code, "message": message])
        return Response(status: status, headers: h, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    static func from(_ e: AccessError) -> APIError {
        switch e.kind {
        case .badRequest: return APIError.badRequest(e.description)
        case .unauthorized: return APIError(.unauthorized, "unauthorized", e.description)
        case .forbidden: return APIError(.forbidden, "forbidden", e.description)
        case .notFound: return APIError.notFound(e.description)
        case .conflict: return APIError(.conflict, "conflict", e.description)
        case .tooManyAttempts:
            var a = APIError(.tooManyRequests, "too_many_attempts", e.description)
            if let s = e.retryAfter { a.headers[.retryAfter] = String(s) }
            return a
        }
    }

    /// Maps what the core throws to what a client should see.
    static func from(_ error: any Error) -> APIError {
        switch error {
        case let e as APIError: return e
        case let e as AccessError: return from(e)
        case let e as NothingRecorded: return APIError(.notFound, "nothing_recorded", e.description)
        case let e as ExportError: return APIError.badRequest(e.description)
        case let e as HTTPError:
            return APIError(
                e.status, e.status == .notFound ? "not_found" : "http_\(e.status.code)", e.body ?? e.status.reasonPhrase
            )
        case let e as MediaError where e.kind == .corrupt:
            return APIError(.internalServerError, "corrupt_recording", e.message)
        default:
            return APIError(.internalServerError, "internal", "\(error)")
        }
    }
}
