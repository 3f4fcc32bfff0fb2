import Hummingbird
import HummingbirdWebSocket
import NIOCore
import NVRAccess

/// The request context of the NVR's routes: who is asking (set by AccessMiddleware) and from
/// which address (for login throttling and the audit log); the same for WebSocket upgrades
/// (live view), which pass the same checks.
struct NVRContext: RequestContext, WebSocketRequestContext {
    var coreContext: CoreRequestContextStorage
    let webSocket = WebSocketHandlerReference<NVRContext>()
    /// Set for every request that reached a route (AccessMiddleware refuses the others).
    var identity: Identity?
    let remoteAddress: String

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
    }

    /// Requests a server must answer without a user, then a ceiling on JSON bodies (the largest
    /// legitimate one is a camera's config).
    var maxUploadSize: Int { 256 * 1024 }
}
