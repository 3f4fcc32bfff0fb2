import Foundation
import NVRTime

/// An access error with the HTTP status it maps to.
public struct AccessError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case badRequest, unauthorized, forbidden, notFound, conflict, tooManyAttempts
    }
    public let kind: Kind
    public let description: String
    /// For tooManyAttempts: seconds until another try is allowed.
    public var retryAfter: Int?

    public init(_ kind: Kind, _ message: String, retryAfter: Int? = nil) {
        self.kind = kind
        description = message
        self.retryAfter = retryAfter
    }
    public static func badRequest(_ m: String) -> AccessError { .init(.badRequest, m) }
    public static func notFound(_ m: String) -> AccessError { .init(.notFound, m) }
    public static func conflict(_ m: String) -> AccessError { .init(.conflict, m) }
    public static func forbidden(_ m: String) -> AccessError { .init(.forbidden, m) }
}
