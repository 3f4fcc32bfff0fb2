import Foundation
import Hummingbird

/// Turns every error — ours, the router's 404 and 405, the core's — into a JSON answer, and
/// logs the ones that are the server's fault.
struct JSONErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    let routes: DocumentedRoutes

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let e as HTTPError where e.status == .notFound {
            // The router found no handler: a documented path asked with another method is 405.
            guard let allowed = routes.allowed(path: request.uri.path) else {
                return try APIError.from(e).response(from: request, context: context)
            }
            var answer = APIError(
                .methodNotAllowed, "method_not_allowed",
                "\(request.uri.path) answers \(allowed.joined(separator: ", ")), not \(request.method)")
            answer.headers[.allow] = allowed.joined(separator: ", ")
            return try answer.response(from: request, context: context)
        } catch {
            let e = APIError.from(error)
            if e.status.code >= 500 { context.logger.error("\(request.method) \(request.uri.path): \(e.message)") }
            return try e.response(from: request, context: context)
        }
    }
}
