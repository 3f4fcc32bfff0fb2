import Foundation
import GRDB
import Synchronization

/// The id of a row that may not be in the index yet: the recording path hands its rows to
/// the index writer and goes on; the writer fills the id in once the row is committed.
public final class PendingRowID: Sendable {
    private let stored = Atomic<Int64>(0)

    public init(_ id: Int64? = nil) { if let id { stored.store(id, ordering: .releasing) } }

    /// The committed row's id; nil until then (or when its insert failed for good).
    public var value: Int64? {
        let v = stored.load(ordering: .acquiring)
        return v <= 0 ? nil : v
    }

    /// Called by the index writer after the transaction that inserted the row committed.
    public func publish(_ id: Int64) { stored.store(id, ordering: .releasing) }

    /// The index writer gave the insert up: the row will never be there.
    public func abandon() { stored.store(-1, ordering: .releasing) }
    public var isAbandoned: Bool { stored.load(ordering: .acquiring) == -1 }
}
