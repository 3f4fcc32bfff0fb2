import Hummingbird
import NIOCore
import NVRIndex
import NVRRecorder

/// GET /metrics.
struct MetricsRoutes: IndexedRoutes {
    let index: any IndexStore
    let recorder: Recorder?
    let metrics: MetricsExporter
    let connections: ConnectionRegistry

    func register(on router: Router<NVRContext>) {
        router.get("/metrics") { _, c in try await metricsText(c) }
    }

    /// GET /metrics (admin): Prometheus's text exposition format.
    func metricsText(_ c: NVRContext) async throws -> Response {
        try admin(c)
        let text = try await offload { [index, recorder, metrics, connections] in
            try metrics.render(index: index, recorder: recorder, connections: connections)
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}

/// Counts every answered request for /metrics by its route's template (the outermost
/// middleware, so refusals by the others are counted too).
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: MetricsExporter

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            let response = try await next(request, context)
            metrics.requestFinished(
                route: context.endpointPath ?? "unmatched", method: request.method.rawValue,
                status: response.status.code)
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            metrics.requestFinished(
                route: context.endpointPath ?? "unmatched", method: request.method.rawValue, status: status)
            throw error
        }
    }
}
