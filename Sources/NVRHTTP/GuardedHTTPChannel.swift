import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// A server child channel (Hummingbird's HTTP/1 with WebSocket upgrade) with a
/// `ConnectionGuard` around its HTTP decoder, and the per-address connection cap: a
/// connection over the cap is answered 503 and closed before anything of it is read.
struct GuardedHTTPChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    let registry: ConnectionRegistry

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let address = channel.remoteAddress?.ipAddress ?? "unknown"
        let admitted = registry.admit(address)
        if admitted {
            channel.closeFuture.whenComplete { [registry] _ in registry.release(address) }
        }
        return base.setup(channel: channel, logger: logger).flatMapThrowing { [registry] value in
            let pipeline = channel.pipeline.syncOperations
            let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            let guardian = ConnectionGuard(limits: registry.limits, registry: registry)
            try pipeline.addHandler(ConnectionGuard.BytesSide(guardian), position: .before(decoder))
            try pipeline.addHandler(ConnectionGuard.RequestsSide(guardian), position: .after(decoder))
            if !admitted {
                guardian.reject(
                    .serviceUnavailable, "too_many_connections",
                    "this address has \(registry.limits.maxConnectionsPerAddress) connections open already")
            }
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
