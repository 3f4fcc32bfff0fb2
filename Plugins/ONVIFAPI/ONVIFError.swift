/// What went wrong talking to an ONVIF camera, said as a user reads it.
public struct ONVIFError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// The camera refused the user name or password (ter:NotAuthorized, HTTP 401).
        case notAuthorized
        /// Not reachable (connection refused, timeout).
        case unreachable
        /// A SOAP fault or HTTP error other than the above.
        case refused
        /// An answer we cannot read.
        case malformed
        /// A subscription the camera no longer knows (it ended or was dropped).
        case subscriptionGone
    }
    public let kind: Kind
    public let description: String
    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}
