import Hummingbird
import NVRAccess
import NVRIndex
import NVRIndexPostgres
import NVRPlayback
import NVRPluginHost
import NVRRecorder

/// The JSON API and the page: what the routes share (logins, tokens, metrics, open
/// connections) and the route groups, one per resource, each holding only what it needs
/// (design/api.md; the OpenAPI document is at /api/openapi.json).
struct API: Sendable {
    let sessions: SessionStore
    let tokens: TokenStore
    let metrics = MetricsExporter()
    /// Open connections and what their guards refused (ConnectionGuard).
    let connections: ConnectionRegistry
    /// The groups on the plain router.
    let routes: [any APIRoutes]
    /// The live view's WebSocket, on the upgrade router.
    let live: LiveRoutes
    /// Talking through a camera's speaker: a WebSocket too.
    let talk: TalkRoutes
    /// On a recorder node, the nodes' key (AccessMiddleware.nodeKey).
    let nodeKey: (@Sendable () throws -> String)?

    init(
        index: any IndexStore, storage: StorageLayout, recorder: Recorder?, plugins: PluginHost, maxViewSeconds: Int,
        sessionDays: Int = 30, secureCookies: Bool = false, connectionLimits: ConnectionLimits = .init(),
        tlsCertificate: String? = nil
    ) {
        connections = ConnectionRegistry(limits: connectionLimits)
        sessions = SessionStore(index: index, lifetimeDays: sessionDays)
        tokens = TokenStore(index: index)
        let accounts = Accounts(index: index)
        let audit = AuditLog(index: index)
        let snapshots = Snapshots(index: index, storage: storage)
        let playback = PlaybackRoutes(
            index: index, storage: storage, snapshots: snapshots, views: ViewCache(), maxViewSeconds: maxViewSeconds)
        live = LiveRoutes(index: index, recorder: recorder)
        if let pg = index as? PostgresIndex, pg.node != nil {
            nodeKey = { try pg.nodeKey() }
        } else {
            nodeKey = nil
        }
        talk = TalkRoutes(index: index, plugins: plugins, recorder: recorder, audit: audit)
        routes = [
            WebRoutes(),
            CameraRoutes(index: index, recorder: recorder),
            playback,
            ExportRoutes(index: index, storage: storage, maxViewSeconds: maxViewSeconds),
            EventRoutes(index: index, storage: storage, snapshots: snapshots, audit: audit, playback: playback),
            ClipRoutes(index: index, audit: audit, playback: playback),
            ReviewRoutes(index: index),
            SessionRoutes(
                index: index, recorder: recorder, accounts: accounts, sessions: sessions, throttle: LoginThrottle(),
                audit: audit,
                secureCookies: secureCookies),
            CameraAdminRoutes(index: index, storage: storage, plugins: plugins, recorder: recorder, audit: audit),
            CardRoutes(index: index, storage: storage, plugins: plugins, recorder: recorder, audit: audit),
            PTZRoutes(index: index, plugins: plugins, recorder: recorder, audit: audit),
            talk,
            DetectRoutes(detection: recorder?.options.detection ?? DetectionOptions()),
            TLSRoutes(storage: storage, certificate: tlsCertificate, audit: audit),
            NodeRoutes(index: index, storage: storage),
            AccountRoutes(index: index, accounts: accounts, sessions: sessions, tokens: tokens, audit: audit),
            RetentionRoutes(index: index, storage: storage, audit: audit, retention: recorder?.retention),
            MetricsRoutes(index: index, recorder: recorder, metrics: metrics, connections: connections),
            live,
        ]
    }

    func register(on router: Router<NVRContext>) {
        for group in routes { group.register(on: router) }
    }

    func registerLive(on router: Router<NVRContext>) {
        live.registerUpgrade(on: router)
        talk.registerUpgrade(on: router)
    }
}
