import Foundation
import Logging
import NVRIndex
import NVRTime

/// Writes the index journal an earlier process left (it was killed or stopped while the index
/// could not take its rows), at start, before recovery: recovery would remove the files those
/// rows describe.
///
/// Unlike the writer's own replay, no lease fences these rows (a node holds none yet), so two
/// checks come first:
/// - a row already in the index (the process died between the commit that wrote the journal's
///   rows and emptying it) is not written twice: a segment is known by its path, an event by
///   its camera, start, type and source;
/// - a camera whose journaled footage overlaps another segment of the index (another node
///   recorded it meanwhile) gets none of its journaled rows: two writers for one camera must
///   never both be in the index. Its files are then removed by recovery as files without rows.
///
/// Camera states in the journal are not written (they were the camera's state then). A record
/// that does not check stops the replay there: the file is set aside for a person, and
/// recovery keeps files without rows this time.
public enum JournalReplay {
    public struct Report: Sendable, Equatable {
        /// Writes applied.
        public var written = 0
        /// Segment and event rows the index had already.
        public var alreadyIn = 0
        /// Cameras whose journaled rows overlapped another writer's footage (not written).
        public var refusedCameras: [Int64] = []
        /// Writes the index refused one by one (a constraint), dropped.
        public var dropped = 0
        /// Bytes at the journal's end that were not a whole record.
        public var tornBytes = 0
        /// Where a journal with a record that did not check was moved (the writes before it
        /// were written). Its other rows' files are then not rows' files recovery may remove.
        public var damagedAside: String?
    }

    /// Throws when the index cannot be written now (the journal is kept for the next start).
    @discardableResult
    public static func run(journal: IndexJournal, index: any IndexStore, logger: Logger) throws -> Report {
        var report = Report()
        guard !journal.isEmpty else { return report }
        let contents = try journal.read()
        report.tornBytes = contents.torn
        if contents.torn > 0 {
            logger.warning(
                "index journal \(journal.path): \(contents.torn) bytes at its end are not a whole record (ignored)")
        }
        var writes: [RecordingWrite] = []
        for w in contents.writes {
            switch w {
            case .cameraState:
                // What a camera's connection was at the time: stale now, and the camera may be
                // another node's by now.
                continue
            case .insertSegment(let row, let ref, _) where ref.value == nil:
                if let id = try index.segmentID(path: row.path) {
                    ref.publish(id)
                    report.alreadyIn += 1
                    continue
                }
            case .saveEvent(let e, let ref) where ref.value == nil:
                let same = try index.events(
                    cameraID: e.cameraID, start90k: e.start90k - 1, end90k: e.start90k + 1, type: e.type, limit: 100
                ).first { $0.start90k == e.start90k && $0.source == e.source }
                if let id = same?.id {
                    ref.publish(id)
                    report.alreadyIn += 1
                }
            default: break
            }
            writes.append(w)
        }
        let owners = try Owners(writes, index: index)
        let refused = try camerasRecordedByOthers(writes, owners: owners, index: index)
        if !refused.isEmpty {
            report.refusedCameras = refused.sorted()
            logger.error(
                "index journal: not writing the rows of cameras \(report.refusedCameras): another writer's footage overlaps them (their files are removed as files without rows)"
            )
            writes = writes.filter { owners.camera(of: $0).map { !refused.contains($0) } ?? true }
        }
        do {
            let inserted = try index.apply(writes)
            for (ref, id) in inserted { ref.publish(id) }
            report.written = writes.count
        } catch  where IndexError.isRetryable(error) {
            throw IndexError("cannot write the index journal \(journal.path) into the index: \(error)")
        } catch {
            // One write is at fault: keep the others (as the index writer does).
            for w in writes {
                do {
                    let inserted = try index.apply([w])
                    for (ref, id) in inserted { ref.publish(id) }
                    report.written += 1
                } catch {
                    logger.error("index journal: dropped a write the index refused: \(error)")
                    report.dropped += 1
                }
            }
        }
        if contents.damaged {
            let aside = try journal.setAside()
            report.damagedAside = aside
            logger.error(
                "index journal: a record after the first \(contents.writes.count) writes does not check; the rest are not written, and the file is kept in \(aside) (recovery keeps files without rows this time)"
            )
        } else {
            try journal.clear()
        }
        logger.notice(
            "index journal: wrote \(report.written) rows an earlier run kept while the index was unreachable (\(report.alreadyIn) were in already, \(report.dropped) refused)"
        )
        return report
    }

    /// The camera each write is about: its row's, or for a write naming a segment, that
    /// segment's (from another write of the journal, or for one named by id, from the index).
    struct Owners {
        var rows: [ObjectIdentifier: Int64] = [:]
        var ids: [Int64: Int64] = [:]

        init(_ writes: [RecordingWrite], index: any IndexStore) throws {
            for w in writes {
                switch w {
                case .insertSegment(let row, let ref, _), .completeSegment(let ref, let row, _, _):
                    rows[ObjectIdentifier(ref)] = row.cameraID
                    if let id = ref.value { ids[id] = row.cameraID }
                default: break
                }
            }
            for w in writes {
                switch w {
                case .segmentProgress(let ref, _, _, _, _, _), .removeSegment(let ref), .markEvent(let ref):
                    if let id = ref.value, ids[id] == nil, let camera = try index.cameraID(segmentID: id) {
                        ids[id] = camera
                    }
                default: break
                }
            }
        }

        func camera(of w: RecordingWrite) -> Int64? {
            switch w {
            case .insertSegment(let row, _, _), .completeSegment(_, let row, _, _): return row.cameraID
            case .markEventSegments(let camera, _, _): return camera
            case .saveEvent(let e, _): return e.cameraID
            case .cameraState(let s): return s.cameraID
            case .insertSampleEntry: return nil
            case .segmentProgress(let ref, _, _, _, _, _), .removeSegment(let ref), .markEvent(let ref):
                return ref.value.flatMap { ids[$0] } ?? rows[ObjectIdentifier(ref)]
            }
        }
    }

    /// Cameras with a segment in the index, not one of the journal's, that overlaps the span
    /// of the journal's footage of that camera.
    static func camerasRecordedByOthers(_ writes: [RecordingWrite], owners: Owners, index: any IndexStore) throws
        -> Set<Int64>
    {
        var span: [Int64: (start: Int64, end: Int64)] = [:]
        var ours = Set<String>()
        var ourIDs = Set<Int64>()
        func widen(_ camera: Int64, _ start: Int64, _ end: Int64) {
            let s = span[camera]
            span[camera] = (min(s?.start ?? start, start), max(s?.end ?? end, end))
        }
        for w in writes {
            switch w {
            case .insertSegment(let row, let ref, _), .completeSegment(let ref, let row, _, _):
                ours.insert(row.path)
                if let id = ref.value { ourIDs.insert(id) }
                widen(row.cameraID, row.start90k, Time90k.add(row.start90k, max(row.duration90k, 0)))
            case .segmentProgress(let ref, let start, let duration, _, _, _):
                if let id = ref.value { ourIDs.insert(id) }
                if let camera = owners.camera(of: w) { widen(camera, start, Time90k.add(start, max(duration, 0))) }
            default: break
            }
        }
        var refused = Set<Int64>()
        for (camera, s) in span {
            let others = try index.segments(cameraID: camera, start90k: s.start, end90k: s.end).filter {
                !ours.contains($0.path) && !ourIDs.contains($0.id ?? 0) && $0.start90k < s.end
                    && Time90k.add($0.start90k, $0.duration90k) > s.start
            }
            if !others.isEmpty { refused.insert(camera) }
        }
        return refused
    }
}
