/// Who is asking, once authenticated: by session cookie, by API token, or the local CLI.
public struct Identity: Sendable, Equatable {
    public enum Via: Sendable, Equatable {
        /// A browser session; changes must carry its CSRF token.
        case session(id: Int64, csrf: String)
        case token(id: Int64)
        /// No authentication asked for (`--allow-unauthenticated`), or the CLI on the box.
        case unauthenticated
        /// Another recorder node, by the nodes' key: only to relay a camera's live view.
        case node
    }

    public var userID: Int64?
    public var name: String
    public var role: Role
    /// Camera names a viewer may see; nil: every camera.
    public var cameras: Set<String>?
    /// A viewer given the right to pan, tilt and zoom (admins always may).
    public var ptz: Bool
    /// A viewer given the right to talk through its cameras (admins always may).
    public var talk: Bool
    public var via: Via

    public init(
        userID: Int64?, name: String, role: Role, cameras: Set<String>?, ptz: Bool = false, talk: Bool = false,
        via: Via
    ) {
        self.userID = userID
        self.name = name
        self.role = role
        self.cameras = cameras
        self.ptz = ptz
        self.talk = talk
        self.via = via
    }

    /// Anyone, when the server runs with no authentication.
    public static let anonymousAdmin = Identity(
        userID: nil, name: "anonymous", role: .admin, cameras: nil, via: .unauthenticated)

    public var isAdmin: Bool { role == .admin }

    /// Whether this identity may watch `camera` (its recordings, live view, events, snapshots).
    public func mayView(camera: String) -> Bool { cameras?.contains(camera) ?? true }

    /// Whether this identity may turn and zoom `camera`: an admin, or a viewer given `ptz`
    /// who may watch it.
    public func maySteer(camera: String) -> Bool { isAdmin || (ptz && mayView(camera: camera)) }

    /// Whether this identity may talk through `camera`'s speaker: an admin, or a viewer given
    /// `talk` who may watch it.
    public func mayTalk(camera: String) -> Bool { isAdmin || (talk && mayView(camera: camera)) }
}
