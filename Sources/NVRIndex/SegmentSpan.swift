import Foundation
import GRDB

/// The part of a segment row a timeline needs.
public struct SegmentSpan: Sendable, Equatable {
    public var start90k: Int64
    public var duration90k: Int64
    public var bytes: Int64
    public var hasEvent: Bool
    /// "live" (recorded from the stream) or, later, "card" (backfilled from the camera's card).
    public var source: String
    public var end90k: Int64 { start90k + duration90k }
    public init(start90k: Int64, duration90k: Int64, bytes: Int64, hasEvent: Bool, source: String) {
        self.start90k = start90k
        self.duration90k = duration90k
        self.bytes = bytes
        self.hasEvent = hasEvent
        self.source = source
    }
    public init(_ s: SegmentRecord) {
        self.init(
            start90k: s.start90k, duration90k: s.duration90k, bytes: s.bytes, hasEvent: s.hasEvent, source: s.source)
    }
}
