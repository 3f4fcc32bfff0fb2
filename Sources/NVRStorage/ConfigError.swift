import Foundation

public struct ConfigError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ m: String) { description = m }
}
