import NIOCore

/// What one HTTP connection may do before it is answered with an error and closed
/// (design/api.md, "Connections"). The sizes are nginx's defaults, which browsers, curl and
/// reverse proxies live with: a request line or a header field over 8 KiB, or all header
/// fields over 64 KiB, is refused.
public struct ConnectionLimits: Sendable {
    /// Longest request line (method, target, version), else 414; longest header field, else 431.
    public var maxLine = 8 * 1024
    /// All header fields of one request together, else 431.
    public var maxHeaderBytes = 64 * 1024
    /// Header fields in one request, else 431.
    public var maxHeaderCount = 100
    /// From a connection's first byte, or its previous response's end, to its request's last
    /// header: a client that sends its headers slower than this (slowloris) gets 408.
    public var headerTimeout: TimeAmount = .seconds(10)
    /// A kept-alive connection with no request for this long is closed (no answer is owed).
    public var idleTimeout: TimeAmount = .seconds(60)
    /// Open connections from one IP address; one more is answered 503 and closed. Sized for a
    /// reverse proxy in front (every client then comes from one address) and for a browser
    /// with many live tiles (a WebSocket each).
    public var maxConnectionsPerAddress = 256
    /// After an error answer, what the client still sends is read and dropped this long before
    /// the connection is closed: closing on unread bytes sends a reset, which can destroy the
    /// answer before the client reads it.
    public var linger: TimeAmount = .milliseconds(500)

    public init() {}
}
