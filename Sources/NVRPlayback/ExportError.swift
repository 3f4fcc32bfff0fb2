/// Why an export (an archive, a timelapse) cannot be made from what was asked: a client's
/// mistake (HTTP 400), not the server's.
public struct ExportError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ d: String) { description = d }
}
