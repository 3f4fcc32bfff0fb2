import Foundation
import GRDB
import Synchronization

/// One write of the recording path, applied by the index writer in a batch (one transaction
/// for everything handed over since the last commit). Rows are named by `PendingRowID`, so a
/// segment can be inserted, updated and completed in the same batch.
public enum RecordingWrite: Sendable {
    /// A sample entry the index may not have yet (a camera's first connection, a new picture
    /// size): its id is the existing row's when another process added the same box meanwhile.
    case insertSampleEntry(SampleEntryRecord, PendingRowID)
    /// `entries` (video, then audio) name the row's sample entries when they may still be
    /// pending: their ids replace the row's at apply time.
    case insertSegment(SegmentRecord, PendingRowID, entries: [PendingRowID] = [])
    case segmentProgress(PendingRowID, start90k: Int64, duration90k: Int64, bytes: Int64, frames: Int, keyFrames: Int)
    /// The row (its id is taken from the reference) and its frame index; `entries` as for
    /// `insertSegment`.
    case completeSegment(PendingRowID, SegmentRecord, SegmentFramesRecord, entries: [PendingRowID] = [])
    case removeSegment(PendingRowID)
    case markEvent(PendingRowID)
    case markEventSegments(cameraID: Int64, start90k: Int64, end90k: Int64)
    /// Inserts the event when its reference has no id yet, updates it otherwise.
    case saveEvent(EventRecord, PendingRowID)
    case cameraState(CameraStateRecord)
}

extension IndexDatabase {
    /// Applies `writes` in order in one transaction. Returns the ids of the rows it inserted,
    /// to publish once the transaction has committed (not before: a rollback un-inserts them).
    /// A write naming a row that was never inserted (its insert failed for good) is skipped.
    public func apply(_ writes: [RecordingWrite]) throws -> [(PendingRowID, Int64)] {
        try pool.write { db in try Self.apply(writes, db) }
    }

    static func apply(_ writes: [RecordingWrite], _ db: Database) throws -> [(PendingRowID, Int64)] {
        var inserted: [(PendingRowID, Int64)] = []
        var ids: [ObjectIdentifier: Int64] = [:]
        func id(_ ref: PendingRowID) -> Int64? { ids[ObjectIdentifier(ref)] ?? ref.value }
        func resolve(_ row: inout SegmentRecord, _ entries: [PendingRowID]) {
            guard let video = entries.first else { return }
            row.videoEntryID = id(video) ?? row.videoEntryID
            row.audioEntryID = entries.count > 1 ? (id(entries[1]) ?? row.audioEntryID) : nil
        }
        for w in writes {
            switch w {
            case .insertSampleEntry(var entry, let ref):
                guard id(ref) == nil else { continue }
                let new: Int64
                if let existing = try Int64.fetchOne(
                    db, sql: "SELECT id FROM sample_entry WHERE box = ?", arguments: [entry.box])
                {
                    new = existing
                } else {
                    entry.id = nil
                    try entry.insert(db)
                    guard let made = entry.id else { continue }
                    new = made
                }
                ids[ObjectIdentifier(ref)] = new
                inserted.append((ref, new))
            case .insertSegment(var row, let ref, let entries):
                resolve(&row, entries)
                row.id = nil
                try row.insert(db)
                guard let new = row.id else { continue }
                ids[ObjectIdentifier(ref)] = new
                inserted.append((ref, new))
            case .segmentProgress(let ref, let start, let duration, let bytes, let frames, let keyFrames):
                guard let sid = id(ref) else { continue }
                try db.execute(
                    sql: """
                        UPDATE segment SET start90k = ?, duration90k = ?, bytes = ?, frames = ?, key_frames = ? WHERE id = ? AND state = 'writing'
                        """, arguments: [start, duration, bytes, frames, keyFrames, sid])
            case .completeSegment(let ref, var row, var frames, let entries):
                resolve(&row, entries)
                guard let sid = id(ref) else {
                    // Its insert was refused (and logged): the file is whole, so it gets its
                    // row now rather than none (retention and playback must see it).
                    row.id = nil
                    row.state = .complete
                    try row.insert(db)
                    guard let new = row.id else { continue }
                    frames.segmentID = new
                    try frames.save(db)
                    ids[ObjectIdentifier(ref)] = new
                    inserted.append((ref, new))
                    continue
                }
                row.id = sid
                row.state = .complete
                // Marked by a markEvent meanwhile: keep it (the row handed over may predate it).
                if try Bool.fetchOne(db, sql: "SELECT has_event FROM segment WHERE id = ?", arguments: [sid]) == true {
                    row.hasEvent = true
                }
                try row.update(db)
                frames.segmentID = sid
                try frames.save(db)
            case .removeSegment(let ref):
                guard let sid = id(ref) else { continue }
                try db.execute(sql: "DELETE FROM segment_frames WHERE segment_id = ?", arguments: [sid])
                try db.execute(sql: "DELETE FROM segment WHERE id = ?", arguments: [sid])
            case .markEvent(let ref):
                guard let sid = id(ref) else { continue }
                try db.execute(sql: "UPDATE segment SET has_event = 1 WHERE id = ?", arguments: [sid])
            case .markEventSegments(let cameraID, let start, let end):
                let low = try Self.earliestStart(db, cameraID: cameraID, overlapping: start)
                try db.execute(
                    sql: """
                        UPDATE segment SET has_event = 1
                        WHERE camera_id = ? AND start90k < ? AND start90k >= ? AND start90k + duration90k > ? AND has_event = 0
                        """, arguments: [cameraID, end, low, start])
            case .saveEvent(var event, let ref):
                if let eid = id(ref) {
                    event.id = eid
                    try event.update(db)
                } else {
                    event.id = nil
                    try event.insert(db)
                    guard let new = event.id else { continue }
                    ids[ObjectIdentifier(ref)] = new
                    inserted.append((ref, new))
                }
            case .cameraState(let s):
                try s.save(db)
            }
        }
        return inserted
    }

    /// Takes `count` run ids at once (the index writer hands them out without a write each).
    public func reserveRunIDs(_ count: Int) throws -> Range<Int64> {
        try pool.write { db in
            guard
                let next = try Int64.fetchOne(
                    db, sql: "UPDATE run_counter SET next = next + ? WHERE id = 1 RETURNING next - ?",
                    arguments: [count, count])
            else {
                throw IndexError("run_counter has no row")
            }
            return next..<(next + Int64(count))
        }
    }

    /// One fresh run id (runs are numbered across all cameras and processes: schema v7's counter).
    public func nextRunID() throws -> Int64 { try reserveRunIDs(1).lowerBound }

    /// Every sample entry's id by its box (the index writer keeps them, so the recording path
    /// never asks the index).
    public func sampleEntryIDs() throws -> [Data: Int64] {
        try pool.read { db in
            var byBox: [Data: Int64] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT id, box FROM sample_entry") {
                let box: Data = row["box"]
                let id: Int64 = row["id"]
                byBox[box] = id
            }
            return byBox
        }
    }
}
