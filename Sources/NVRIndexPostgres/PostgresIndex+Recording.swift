import Foundation
import NVRIndex

extension PostgresIndex {
    /// As IndexDatabase.apply: the batch in order, in one transaction; the ids of the rows it
    /// inserted, to publish once committed. A write naming a row never inserted is skipped.
    public func apply(_ writes: [RecordingWrite]) throws -> [(PendingRowID, Int64)] {
        let awaiting = fence.awaiting
        guard awaiting.isEmpty else {
            // The writer tries again in a second; the heartbeat settles them first.
            throw IndexError(
                "waiting for PostgreSQL to confirm the leases of cameras \(awaiting.sorted()) (recorded through an outage)",
                retryable: true)
        }
        return try transaction { s in
            // Fencing: with leases, a camera's writes land only while the index's lease for it
            // is this node's, unexpired, with the token the node holds. Checked at the start of
            // the batch: KEY SHARE keeps the row from being deleted meanwhile but lets the
            // heartbeat extend it (a long batch must not starve the heartbeat) and a takeover of
            // an expired lease commit. Such a batch's footage was recorded before the node's own
            // deadline, which comes before the lease can expire.
            var allowed: Set<Int64>?
            if let node, let mine = fence.current {
                let leased = try s.run(
                    "SELECT camera_id, token FROM camera_lease WHERE node = ? AND expires > clock_timestamp() FOR KEY SHARE",
                    [.text(node)]
                ).rows.map { try $0.decode((Int64, Int64).self) }
                allowed = Set(leased.filter { mine[$0.0] == $0.1 }.map(\.0))
            }
            var refused = Set<Int64>()
            func mayWrite(camera: Int64) -> Bool {
                guard let allowed, !allowed.contains(camera) else { return true }
                refused.insert(camera)
                return false
            }
            // Writes naming a segment by id check its camera in their own statement (no lookup).
            let fenced: (sql: String, args: [PostgresValue]) =
                allowed.map { a in
                    a.isEmpty ? (" AND false", []) : (" AND camera_id IN (\(Self.marks(a.count)))", a.map { .int($0) })
                } ?? ("", [])
            defer {
                if !refused.isEmpty {
                    logger.warning(
                        "index: refused writes for cameras \(refused.sorted()): this node no longer holds their lease")
                }
            }
            var inserted: [(PendingRowID, Int64)] = []
            var ids: [ObjectIdentifier: Int64] = [:]
            func id(_ ref: PendingRowID) -> Int64? { ids[ObjectIdentifier(ref)] ?? ref.value }
            func resolve(_ row: inout SegmentRecord, _ entries: [PendingRowID]) {
                guard let video = entries.first else { return }
                row.videoEntryID = id(video) ?? row.videoEntryID
                row.audioEntryID = entries.count > 1 ? (id(entries[1]) ?? row.audioEntryID) : nil
            }
            func made(_ ref: PendingRowID, _ new: Int64) {
                ids[ObjectIdentifier(ref)] = new
                inserted.append((ref, new))
            }
            for w in writes {
                switch w {
                case .insertSampleEntry(let entry, let ref):
                    guard id(ref) == nil else { continue }
                    made(ref, try Self.sampleEntryID(entry, s))
                case .insertSegment(var row, let ref, let entries):
                    guard mayWrite(camera: row.cameraID) else { continue }
                    resolve(&row, entries)
                    row = stamped(row)
                    row.id = nil
                    guard let new = try s.insert(row, into: "segment") else { continue }
                    made(ref, new)
                case .segmentProgress(let ref, let start, let duration, let bytes, let frames, let keyFrames):
                    guard let sid = id(ref) else { continue }
                    try s.execute(
                        """
                        UPDATE segment SET start90k = ?, duration90k = ?, bytes = ?, frames = ?, key_frames = ?
                        WHERE id = ? AND state = 'writing'\(fenced.sql)
                        """,
                        [
                            .int(start), .int(duration), .int(bytes), PostgresValue(frames), PostgresValue(keyFrames),
                            .int(sid),
                        ] + fenced.args)
                case .completeSegment(let ref, var row, var frames, let entries):
                    guard mayWrite(camera: row.cameraID) else { continue }
                    resolve(&row, entries)
                    row = stamped(row)
                    row.state = .complete
                    guard let sid = id(ref) else {
                        // Its insert was refused: the file is whole, so it gets its row now.
                        row.id = nil
                        guard let new = try s.insert(row, into: "segment") else { continue }
                        frames.segmentID = new
                        try s.save(frames, in: "segment_frames", key: "segment_id")
                        made(ref, new)
                        continue
                    }
                    row.id = sid
                    // Marked by a markEvent meanwhile: keep it.
                    if try s.scalar(Int64.self, "SELECT has_event FROM segment WHERE id = ?", [.int(sid)]) == 1 {
                        row.hasEvent = true
                    }
                    try s.update(row, in: "segment")
                    frames.segmentID = sid
                    try s.save(frames, in: "segment_frames", key: "segment_id")
                case .removeSegment(let ref):
                    guard let sid = id(ref) else { continue }
                    // Its segment_frames row goes with it (ON DELETE CASCADE).
                    try s.execute("DELETE FROM segment WHERE id = ?\(fenced.sql)", [.int(sid)] + fenced.args)
                case .markEvent(let ref):
                    guard let sid = id(ref) else { continue }
                    try s.execute(
                        "UPDATE segment SET has_event = 1 WHERE id = ?\(fenced.sql)", [.int(sid)] + fenced.args)
                case .markEventSegments(let cameraID, let start, let end):
                    guard mayWrite(camera: cameraID) else { continue }
                    let low = try Self.earliestStart(s, cameraID: cameraID, overlapping: start)
                    try s.execute(
                        """
                        UPDATE segment SET has_event = 1
                        WHERE camera_id = ? AND start90k < ? AND start90k >= ? AND start90k + duration90k > ? AND has_event = 0
                        """, [.int(cameraID), .int(end), .int(low), .int(start)])
                case .saveEvent(var event, let ref):
                    guard mayWrite(camera: event.cameraID) else { continue }
                    if let eid = id(ref) {
                        event.id = eid
                        try s.update(event, in: "event")
                    } else {
                        event.id = nil
                        guard let new = try s.insert(event, into: "event") else { continue }
                        made(ref, new)
                    }
                case .cameraState(let state):
                    guard mayWrite(camera: state.cameraID) else { continue }
                    try s.save(state, in: "camera_state", key: "camera_id")
                }
            }
            return inserted
        }
    }

    public func reserveRunIDs(_ count: Int) throws -> Range<Int64> {
        try autocommit { s in
            guard
                let next = try s.scalar(
                    Int64.self, "UPDATE run_counter SET next = next + ? WHERE id = 1 RETURNING next - ?",
                    [PostgresValue(count), PostgresValue(count)])
            else { throw IndexError("run_counter has no row") }
            return next..<(next + Int64(count))
        }
    }

    public func sampleEntryIDs() throws -> [Data: Int64] {
        try autocommit { s in
            var byBox: [Data: Int64] = [:]
            for row in try s.run("SELECT id, box FROM sample_entry").rows {
                let (id, box) = try row.decode((Int64, Data).self)
                byBox[box] = id
            }
            return byBox
        }
    }
}
