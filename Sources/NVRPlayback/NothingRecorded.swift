/// Nothing is recorded in a requested range (HTTP 404, not a server error).
public struct NothingRecorded: Error, CustomStringConvertible, Sendable {
    public var start: Int64
    public var end: Int64
    public init(start: Int64, end: Int64) {
        self.start = start
        self.end = end
    }
    public var description: String { "nothing recorded between \(Time90k.rfc3339(start)) and \(Time90k.rfc3339(end))" }
}
