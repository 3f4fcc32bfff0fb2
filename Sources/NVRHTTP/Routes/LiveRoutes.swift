import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import NIOCore
import NVRIndex
import NVRRecorder

/// The live view: a WebSocket per viewer on the upgrade router, and the plain GET that says so.
struct LiveRoutes: IndexedRoutes {
    let index: any IndexStore
    let recorder: Recorder?

    /// GET /api/cameras/{name}/live[?stream=sub] (WebSocket): the camera's live video as
    /// fragmented MP4 for Media Source Extensions. Text messages say what comes (`init` with
    /// the codec and which stream, `skip`, `waiting`); binary messages are the init segment,
    /// then one fragment per frame. `stream=sub` asks for the sub-stream (the grid's), and gets
    /// the main stream when the camera has no sub-stream running.
    func registerUpgrade(on router: Router<NVRContext>) {
        router.ws(
            "/api/cameras/{name}/live",
            shouldUpgrade: { r, c in
                // Another node relaying (authenticated by the nodes' key) is no browser.
                if c.identity?.via != .node { try Self.checkOrigin(r, "open the live view") }
                _ = try await camera(c)
                _ = try Self.wantsSubstream(r)
                return .upgrade([:])
            },
            onUpgrade: { inbound, outbound, context in
                let name = context.requestContext.parameters.get("name") ?? ""
                let sub = (try? Self.wantsSubstream(context.request)) ?? false
                // A view another node relays is never relayed further (no loops).
                let relayed = context.requestContext.identity?.via == .node
                await liveView(camera: name, substream: sub, relay: !relayed, inbound: inbound, outbound: outbound)
            })
    }

    /// The same path without the upgrade (on the plain router): answers why it cannot serve it.
    func register(on router: Router<NVRContext>) {
        router.get("/api/cameras/{name}/live") { r, c -> Response in
            _ = try await camera(c)
            _ = try Self.wantsSubstream(r)
            throw APIError(
                .upgradeRequired, "upgrade_required", "the live view is a WebSocket: connect with Upgrade: websocket")
        }
    }

    /// `stream=sub` (true), `stream=main` or none (false); anything else is a 400.
    static func wantsSubstream(_ r: Request) throws -> Bool {
        switch r.uri.queryParameters["stream"].map(String.init) ?? "main" {
        case "main": return false
        case "sub": return true
        default: throw APIError.badRequest("stream is main or sub")
        }
    }

    /// A browser says which page opens a WebSocket: only the NVR's own page may (another site's
    /// page would otherwise ride on the viewer's login). 403 `cross_origin` otherwise.
    static func checkOrigin(_ r: Request, _ what: String) throws {
        if let origin = r.headers[.origin], !sameOrigin(origin, authority: r.head.authority) {
            throw APIError(.forbidden, "cross_origin", "a page from \(origin.prefix(100)) may not \(what)")
        }
    }

    /// Whether an Origin header (scheme://host[:port]) names the authority the request was sent to.
    static func sameOrigin(_ origin: String, authority: String?) -> Bool {
        guard let authority, let sep = origin.range(of: "://") else { return false }
        let scheme = origin[..<sep.lowerBound].lowercased()
        var host = origin[sep.upperBound...].lowercased()
        var want = authority.lowercased()
        let port = scheme == "https" ? ":443" : ":80"
        if want.hasSuffix(port) { want.removeLast(port.count) }
        if host.hasSuffix(port) { host.removeLast(port.count) }
        return host == want
    }

    struct LiveMessage: Encodable {
        var type: String
        /// main or sub: which of the camera's streams this is.
        var stream: String?
        var codec: String?
        var width: Int?
        var height: Int?
        var reason: String?
    }

    /// Sends frames until the viewer goes away. The write waits for the socket: a viewer that
    /// cannot keep up is behind when it asks for its next frame, and LiveHub moves it to the
    /// newest key frame — the recorder and the other viewers never wait for it.
    func liveView(
        camera name: String, substream: Bool, relay: Bool, inbound: WebSocketInboundStream,
        outbound: WebSocketOutboundWriter
    ) async {
        await withTaskGroup(of: Void.self) { group in
            // The viewer closing its side (or any message from it) ends the view.
            group.addTask { do { for try await _ in inbound {} } catch {} }
            group.addTask { await sendLive(camera: name, substream: substream, relay: relay, outbound: outbound) }
            await group.next()
            group.cancelAll()
        }
    }

    private func sendLive(camera name: String, substream: Bool, relay: Bool, outbound: WebSocketOutboundWriter) async {
        var saidWaiting = false
        while !Task.isCancelled {
            let session = recorder?.session(named: name)
            let sub = substream && session?.liveSubstream.isConnected == true
            guard let hub = sub ? session?.liveSubstream : session?.live else {
                // Relayed to another node and not recorded here (any more): closing tells that
                // node to look for the camera's node again.
                if !relay { return }
                // Recorded by another node: its view, relayed, until it ends (that node stops
                // or the camera moves: look again).
                if relay, let target = await relayTarget(camera: name, substream: substream) {
                    let result = await self.relay(target, outbound: outbound)
                    if result.viewerGone { return }
                    if result.forwarded > 0 {
                        saidWaiting = false
                        try? await Task.sleep(for: .milliseconds(200))
                        continue
                    }
                }
                if !saidWaiting {
                    try? await send(
                        LiveMessage(
                            type: "waiting",
                            reason: "the camera is not recording (disabled, or the server records nothing)"), outbound)
                    saidWaiting = true
                }
                try? await Task.sleep(for: .seconds(1))
                continue
            }
            hub.viewers.add(1, ordering: .relaxed)
            defer { hub.viewers.subtract(1, ordering: .relaxed) }
            var cursor = LiveHub.Cursor()
            saidWaiting = false
            while let next = await hub.next(&cursor) {
                do {
                    switch next {
                    case .stream(let s):
                        try await send(
                            LiveMessage(
                                type: "init", stream: sub ? "sub" : "main", codec: s.codec, width: s.width,
                                height: s.height), outbound)
                        try await outbound.write(.binary(ByteBuffer(bytes: s.initSegment)))
                    case .frame(let fragment, _):
                        try await outbound.write(.binary(ByteBuffer(bytes: fragment)))
                    case .skipped:
                        try await send(
                            LiveMessage(
                                type: "skip", reason: "the connection fell behind: continuing from the newest key frame"
                            ), outbound)
                    }
                } catch {
                    return  // the viewer went away
                }
            }
            // The session ended (the camera was changed, renamed or removed): find its new one.
            try? await Task.sleep(for: .milliseconds(200))
        }
    }

    private func send(_ m: LiveMessage, _ outbound: WebSocketOutboundWriter) async throws {
        try await outbound.write(.text(String(decoding: try JSON.encode(m), as: UTF8.self)))
    }
}
