import Hummingbird
import NIOCore
import NVRAccess

/// The request context of the NVR's routes: who is asking (set by AccessMiddleware) and from
/// which address (for login throttling and the audit log).
struct NVRContext: RequestContext {
    var coreContext: CoreRequestContextStorage
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
