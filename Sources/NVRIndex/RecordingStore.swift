import Foundation

/// What the index writer needs of an index, and all the recording path ever writes through:
/// apply a batch of recording writes in one transaction, reserve run ids, list the sample
/// entries. The seam where a second backend goes (PostgreSQL), and where tests put an index
/// that is full, locked or failing.
public protocol RecordingStore: Sendable {
    /// Applies `writes` in order in one transaction; the ids of the rows it inserted.
    func apply(_ writes: [RecordingWrite]) throws -> [(PendingRowID, Int64)]
    /// `count` fresh run ids.
    func reserveRunIDs(_ count: Int) throws -> Range<Int64>
    /// Every sample entry's id by its box.
    func sampleEntryIDs() throws -> [Data: Int64]
}

extension IndexDatabase: RecordingStore {}
