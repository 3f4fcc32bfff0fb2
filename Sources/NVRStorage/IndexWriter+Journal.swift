import Foundation
import NVRIndex
import Synchronization

/// The index writer's journal (see the type's comment): batches the index cannot take are
/// appended to it, and written from it, in order, once the index answers.
extension IndexWriter {
    /// Appends a batch to the journal (and starts journaling); false without a journal, or
    /// when the journal cannot be written (the batch then waits in memory).
    func keepInJournal(_ batch: [(write: RecordingWrite, then: (@Sendable () -> Void)?)]) -> Bool {
        guard let journal, !journalBroken.load(ordering: .relaxed), !journal.isBroken else { return false }
        journalLock.lock()
        defer { journalLock.unlock() }
        do {
            try journal.append(batch.map(\.write))
        } catch {
            logger.error("index writer: cannot keep rows in the journal (\(error)); they wait in memory")
            return false
        }
        let thens = batch.compactMap(\.then)
        if !thens.isEmpty { journaledThens.withLock { $0 += thens } }
        if !journaling.exchange(true, ordering: .relaxed) {
            logger.warning(
                "index writer: the index cannot take rows; keeping them in \(journal.path) until it can")
        }
        return true
    }

    /// Writes the journal's rows into the index if it answers, in one transaction (a write it
    /// refuses on its own is dropped, as in `commit`), and empties the journal. True when the
    /// journal holds nothing now.
    @discardableResult
    func replayJournal() -> Bool {
        guard let journal, journaling.load(ordering: .relaxed) else { return true }
        journalLock.lock()
        defer { journalLock.unlock() }
        guard journaling.load(ordering: .relaxed) else { return true }
        lastReplayAttempt.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
        // A cheap question first (an empty transaction), not the whole journal read each second.
        guard (try? store.apply([])) != nil else { return false }
        let writes: [RecordingWrite]
        let damaged: Bool
        do {
            let read = try journal.read()
            writes = read.writes
            damaged = read.damaged
            if read.torn > 0 {
                logger.error("index writer: \(read.torn) bytes at the end of \(journal.path) are not whole")
            }
        } catch {
            logger.error("index writer: \(error)")
            return false
        }
        do {
            let inserted = try store.apply(writes)
            for (ref, id) in inserted { ref.publish(id) }
        } catch  where IndexError.isRetryable(error) {
            return false
        } catch {
            for w in writes {
                do {
                    let inserted = try store.apply([w])
                    for (ref, id) in inserted { ref.publish(id) }
                } catch {
                    logger.error("index writer: dropped a journaled write the index refused: \(error)")
                    droppedWrites.add(1, ordering: .relaxed)
                    forget([w])
                }
            }
        }
        do {
            if damaged {
                // Only this process wrote it, so this is a disk at fault: kept for a person.
                let aside = try journal.setAside()
                logger.error(
                    "index writer: the index journal was damaged after \(writes.count) writes; the rest are not written (kept in \(aside))"
                )
            } else {
                try journal.clear()
            }
        } catch {
            // Written, but still in the file: the next start would write them again (it skips
            // segments and events already in the index).
            logger.error("index writer: \(error); not using the journal again until restarted")
            journalBroken.store(true, ordering: .relaxed)
        }
        logger.notice("index writer: wrote the \(writes.count) writes kept in the journal")
        let thens = journaledThens.withLock { t -> [@Sendable () -> Void] in
            defer { t = [] }
            return t
        }
        if !thens.isEmpty { callbacks.async { for t in thens { t() } } }
        wake.lock()
        journaling.store(false, ordering: .relaxed)
        wake.broadcast()
        wake.unlock()
        return true
    }
}
