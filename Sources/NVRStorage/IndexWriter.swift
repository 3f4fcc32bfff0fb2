import Foundation
import Logging
import NVRIndex
import Synchronization

/// The one thread that writes the recording path's rows to the index.
///
/// Camera threads hand it `RecordingWrite`s and go on: they never wait for SQLite, so a
/// retention pass deleting 50,000 rows, a checkpoint or a slow disk cannot hold up anyone's
/// packets (bench/index-writer). Everything handed over while a commit runs goes into the
/// next one (at most one commit per `flushInterval`), in the order it was handed over.
///
/// A segment's file can therefore exist a moment before its row: recovery removes the
/// files of a crash that came in between (design/crash-safety.md).
///
/// With a journal (an index on PostgreSQL), a batch the index cannot take (it is unreachable)
/// goes to the journal on disk instead of waiting here, and so does every batch after it until
/// the journal's rows are written, in order, once the index answers again (tried every second).
/// Journaled rows count as committed for `flush()` (a camera stops at once during an outage),
/// not for `flush(applied:)`; nothing journaled is given up for time; what a stop or a crash
/// leaves in the journal is written at the next start (`JournalReplay`). A journal that cannot
/// be appended to (a full or failing disk) falls back to the queue in memory.
///
/// The ids a camera thread needs at once come from this thread too, ahead of time: run ids
/// from a block it keeps reserved, sample entries from the ones it read at start (a new one is
/// a pending row, inserted in the same batch before the segment naming it). So a camera
/// thread waits for the writer only at start-up, before its first reservation and read, or
/// when more than `spareRunIDs` runs start between two of its passes (and gets the index's
/// error if that reservation fails).
public final class IndexWriter: @unchecked Sendable {
    // @unchecked Sendable: `queue`, `handedOver`, `committed`, `committing`, `closing`,
    // `entriesLoaded` and `runIDsWanted` are behind `wake`;
    // `onNoSpace` is set before the first write; the rest is immutable or atomic.
    /// The index, for the writer's users to read; writes go to `store` (the same index, but
    /// in tests).
    public let index: any IndexStore
    let store: any RecordingStore
    let logger: Logger
    private let flushInterval: Double
    let wake = NSCondition()
    private var queue: [(write: RecordingWrite, then: (@Sendable () -> Void)?)] = []
    /// Writes handed over / committed (or given up) so far: `flush` waits for the one.
    private var handedOver: UInt64 = 0
    private var committed: UInt64 = 0
    private var closing = false
    /// The thread has ended (after `close`).
    private var closed = false
    /// Callers waiting in `flush` (the writer then commits without waiting out the interval).
    private var flushWaiters = 0
    /// When the oldest write in the queue was handed over.
    private var oldestHandedOver: UInt64 = 0
    private var thread: Thread?
    /// Callbacks run here, in order, after their write committed: never on the writer thread
    /// (a plugin told of an event must not hold up the index).
    let callbacks = DispatchQueue(label: "index writer callbacks")
    /// Asked for room when SQLite answers SQLITE_FULL; true if some was freed. Runs on the
    /// writer thread (the recorder hands it to its retention thread).
    public var onNoSpace: (@Sendable () -> Bool)?
    /// How long a batch the index cannot take yet is tried again before it is dropped: 2
    /// minutes, longer for a recorder node, whose cameras record on through an outage of
    /// PostgreSQL (design/scale-out.md). Not for a batch kept in the journal.
    public var giveUpSeconds: Double {
        get { Double(giveUpMillis.load(ordering: .relaxed)) / 1000 }
        set { giveUpMillis.store(UInt64(max(newValue, 0) * 1000), ordering: .relaxed) }
    }
    private let giveUpMillis = Atomic<UInt64>(120_000)

    /// Run ids reserved in the index and not handed out yet (refilled by the writer thread
    /// when fewer than `spareRunIDs` are left, 2 × that at a time).
    private let runIDs = Mutex<[Int64]>([])
    static let spareRunIDs = 32
    /// A camera thread found no spare run id: the writer refills at once.
    private var runIDsWanted = false
    /// Refills the index refused, and the last reason: a camera thread waiting for a run id
    /// gets the error (and reconnects later) instead of waiting for ever.
    private var refillFailures = 0
    private var refillError: (any Error)?
    /// Sample entries by their box: those in the index when the writer started, and those
    /// handed over since (pending until their batch commits).
    private let entries = Mutex<[Data: PendingRowID]>([:])
    private var entriesLoaded = false
    /// The last refill failed (logged once until one succeeds; writer thread only).
    private var refillFailing = false

    /// Longest a write waited between hand-over and the end of its commit (for bench/ and /metrics).
    public let worstLagNanos = Atomic<UInt64>(0)
    public let commits = Atomic<Int>(0)
    /// Writes given up (refused by the index, or not writable for `giveUpSeconds`), for /metrics.
    public let droppedWrites = Atomic<Int>(0)

    /// What the writer has not committed yet, for /metrics: how many writes, and how long
    /// the oldest has waited (seconds; 0 when none). A lag that grows means the index
    /// cannot keep up (a slow disk, a lock held by another process).
    public var backlog: (writes: Int, oldestSeconds: Double) {
        wake.lock()
        defer { wake.unlock() }
        let pending = Int(clamping: handedOver &- committed)
        guard pending > 0 else { return (0, 0) }
        // The oldest uncommitted write: the batch being committed's, or the queue's.
        let since = committing ?? oldestHandedOver
        return (pending, Double(DispatchTime.now().uptimeNanoseconds &- since) / 1e9)
    }
    /// When the oldest write of the batch being committed was handed over.
    private var committing: UInt64?

    /// Where batches the index cannot take wait (nil: in memory, for up to `giveUpSeconds`).
    public let journal: IndexJournal?
    /// The journal holds rows not written yet: later batches go after them.
    let journaling = Atomic<Bool>(false)
    /// The callbacks of the journaled writes, run once their rows are written.
    let journaledThens = Mutex<[@Sendable () -> Void]>([])
    /// The journal could not be emptied after its rows were written: not used again by this
    /// process (its rows would be written twice).
    let journalBroken = Atomic<Bool>(false)
    /// Held while appending to the journal or writing it into the index (after `close`, callers'
    /// threads commit too): a batch appended while the journal is written could be emptied with it.
    let journalLock = NSLock()
    /// When the writer last tried to write the journal's rows (uptime nanoseconds).
    let lastReplayAttempt = Atomic<UInt64>(0)

    /// Writes in the journal, waiting for the index (for /metrics).
    public var journaledWrites: Int { journaling.load(ordering: .relaxed) ? (journal?.count ?? 0) : 0 }

    public init(
        index: any IndexStore, logger: Logger, flushInterval: Double = 0.2, store: (any RecordingStore)? = nil,
        journal: IndexJournal? = nil
    ) {
        self.index = index
        self.store = store ?? index
        self.journal = journal
        self.logger = logger
        self.flushInterval = flushInterval
        let t = Thread { [self] in run() }
        t.name = "index writer"
        thread = t
        t.start()
    }

    /// Hands a write over; `then` runs once it is committed.
    public func submit(_ write: RecordingWrite, then: (@Sendable () -> Void)? = nil) {
        wake.lock()
        if closed {
            // After close (a stopping recorder's last words): written here and now.
            wake.unlock()
            commit([(write, then)])
            callbacks.sync {}
            return
        }
        if queue.isEmpty { oldestHandedOver = DispatchTime.now().uptimeNanoseconds }
        queue.append((write, then))
        handedOver += 1
        wake.signal()
        wake.unlock()
    }

    /// Inserts a segment row; its id is filled in when committed.
    public func insertSegment(_ row: SegmentRecord, entries: [PendingRowID] = []) -> PendingRowID {
        let ref = PendingRowID()
        submit(.insertSegment(row, ref, entries: entries))
        return ref
    }

    /// Returns once everything handed over before the call is committed (or given up) and
    /// its callbacks have run. Not from a callback (they run on the queue it waits for).
    /// Rows kept in the journal count as committed (their callbacks run once they are written).
    public func flush() {
        _ = flush(untilApplied: nil)
    }

    /// As `flush`, and waits for rows kept in the journal to be in the index (or refused) too,
    /// as a node must before a lease changes hands; all within `timeout` seconds. False if they
    /// are not by then (the index still unreachable), or the writer has closed with rows in it.
    public func flush(applied timeout: Double) -> Bool {
        flush(untilApplied: Date(timeIntervalSinceNow: timeout))
    }

    /// How many writes have been handed over so far: for `flush(through:applied:)`.
    public var handedOverMark: UInt64 {
        wake.lock()
        defer { wake.unlock() }
        return handedOver
    }

    /// As `flush(applied:)`, for the writes handed over before `mark` was read only (a lease
    /// keeper giving cameras up waits for their last rows, not for every camera's newest ones,
    /// which would keep it waiting while the index is slow).
    public func flush(through mark: UInt64, applied timeout: Double) -> Bool {
        flush(untilApplied: Date(timeIntervalSinceNow: timeout), mark: mark)
    }

    private func flush(untilApplied deadline: Date?, mark: UInt64? = nil) -> Bool {
        wake.lock()
        if closed {
            wake.unlock()
            return !journaling.load(ordering: .relaxed) || deadline == nil
        }
        let target = mark.map { min($0, handedOver) } ?? handedOver
        flushWaiters += 1
        wake.broadcast()
        var applied = true
        if let deadline {
            while committed < target && wake.wait(until: deadline) {}
            while committed >= target && journaling.load(ordering: .relaxed) && !closed && wake.wait(until: deadline) {}
            applied = committed >= target && !journaling.load(ordering: .relaxed)
        } else {
            while committed < target { wake.wait() }
        }
        flushWaiters -= 1
        wake.unlock()
        // Callbacks (a plugin told of an event) are not waited for by one who may not wait long.
        if deadline == nil { callbacks.sync {} }
        return applied
    }

    /// Commits what is left and stops the thread (the thread keeps the writer alive until then).
    public func close() {
        flush()
        wake.lock()
        closing = true
        wake.broadcast()
        while !closed { wake.wait() }
        wake.unlock()
    }

    /// A fresh run id, from the writer's spare ones (see the type's comment for when it waits).
    /// Throws the index's error when the writer's refill, asked for meanwhile, fails.
    public func nextRunID() throws -> Int64 {
        if let id = runIDs.withLock({ $0.popLast() }) { return id }
        wake.lock()
        defer { wake.unlock() }
        let failuresBefore = refillFailures
        while !closed {
            if let id = runIDs.withLock({ $0.popLast() }) { return id }
            if refillFailures != failuresBefore, let error = refillError { throw error }
            if !runIDsWanted {
                runIDsWanted = true
                wake.broadcast()
            }
            wake.wait()
        }
        // After close (a stopping recorder's last words): from the index here and now.
        return try store.reserveRunIDs(1).lowerBound
    }

    /// A sample entry's row: known (its id is there), or handed over now and pending until its
    /// batch commits (a camera's first connection, a new picture size; never per segment).
    /// Segment rows name it through `insertSegment(_:entries:)`.
    public func sampleEntry(_ entry: SampleEntryRecord) -> PendingRowID {
        wake.lock()
        while !entriesLoaded { wake.wait() }
        wake.unlock()
        if let ref = entries.withLock({ $0[entry.box] }) { return ref }
        // Handed over before anyone can see the ref, so every segment row naming it comes after
        // its insert. Two cameras meeting a new format at once both hand it over: the second
        // insert finds the first's row and takes its id.
        let ref = PendingRowID()
        submit(.insertSampleEntry(entry, ref))
        return entries.withLock { known -> PendingRowID in
            if let first = known[entry.box] { return first }
            known[entry.box] = ref
            return ref
        }
    }

    /// Reads the sample entries the index has (once, at start).
    private func loadEntries() {
        do {
            let known = try store.sampleEntryIDs()
            entries.withLock { for (box, id) in known where $0[box] == nil { $0[box] = PendingRowID(id) } }
        } catch {
            // New ones are still found: insertSampleEntry looks for the box before inserting.
            logger.error("index writer: cannot read sample entries: \(error)")
        }
        wake.lock()
        entriesLoaded = true
        wake.broadcast()
        wake.unlock()
    }

    /// Keeps `spareRunIDs` run ids or more in hand; false if the index refused (tried again
    /// at the next pass).
    @discardableResult
    private func refillRunIDs() -> Bool {
        guard runIDs.withLock({ $0.count }) < Self.spareRunIDs else { return true }
        do {
            let block = try store.reserveRunIDs(2 * Self.spareRunIDs)
            runIDs.withLock { $0.insert(contentsOf: block.reversed(), at: 0) }
            if refillFailing { logger.notice("index writer: run ids reserved again") }
            refillFailing = false
            return true
        } catch {
            if !refillFailing { logger.warning("index writer: cannot reserve run ids (trying again): \(error)") }
            refillFailing = true
            wake.lock()
            refillFailures += 1
            refillError = error
            wake.broadcast()
            wake.unlock()
            return false
        }
    }

    private func run() {
        loadEntries()
        var lastCommit = Date.distantPast
        while true {
            let refilled = refillRunIDs()
            wake.lock()
            if runIDsWanted && refilled {
                runIDsWanted = false
                wake.broadcast()
            }
            // A refill the index refused is tried again within a second.
            // So is the journal's replay, while it holds rows.
            while queue.isEmpty && !closing && !(runIDsWanted && refilled) {
                if runIDsWanted || journaling.load(ordering: .relaxed) {
                    _ = wake.wait(until: Date(timeIntervalSinceNow: 1))
                    break
                }
                wake.wait()
            }
            if queue.isEmpty && !closing {
                wake.unlock()
                replayJournal()
                continue
            }
            if queue.isEmpty && closing {
                wake.unlock()
                // One last try; what stays is written at the next start.
                if !replayJournal(), let journal {
                    logger.notice(
                        "index writer: \(journal.count) writes wait in \(journal.path) for the index; they are written at the next start"
                    )
                }
                wake.lock()
                closed = true
                wake.broadcast()
                wake.unlock()
                return
            }
            // Gather what comes in during the rest of the interval into the same commit
            // (a flush or close commits at once).
            let due = lastCommit.addingTimeInterval(flushInterval)
            while !closing && flushWaiters == 0 && wake.wait(until: due) {}
            let batch = queue
            let oldest = oldestHandedOver
            committing = oldest
            queue.removeAll(keepingCapacity: true)
            wake.unlock()
            commit(batch)
            lastCommit = Date()
            commits.add(1, ordering: .relaxed)
            let lag = DispatchTime.now().uptimeNanoseconds &- oldest
            if lag > worstLagNanos.load(ordering: .relaxed) { worstLagNanos.store(lag, ordering: .relaxed) }
            wake.lock()
            committed += UInt64(batch.count)
            committing = nil
            wake.broadcast()
            wake.unlock()
        }
    }

    /// Commits a batch: all in one transaction. When SQLite says it may go in later (a full
    /// disk — after asking retention for room —, a lock another process held past the busy
    /// timeout, an I/O error) it is tried again for up to `giveUpSeconds`; a batch refused
    /// otherwise (a constraint) is applied write by write, and only the writes refused on
    /// their own are dropped.
    private func commit(_ batch: [(write: RecordingWrite, then: (@Sendable () -> Void)?)]) {
        let writes = batch.map(\.write)
        // While the journal holds rows, later ones go after them (and the index is asked again
        // at most once a second, not at every batch).
        if journaling.load(ordering: .relaxed), keepInJournal(batch) {
            let now = DispatchTime.now().uptimeNanoseconds
            if now &- lastReplayAttempt.load(ordering: .relaxed) >= 1_000_000_000 { replayJournal() }
            return
        }
        var fullSince: DispatchTime?
        while true {
            do {
                // The journal's rows first (its append failed for this batch).
                guard replayJournal() else {
                    throw IndexError("the rows in the index journal are not written yet", retryable: true)
                }
                let inserted = try store.apply(writes)
                for (ref, id) in inserted { ref.publish(id) }
                if fullSince != nil { logger.notice("index writer: writing again; \(writes.count) writes committed") }
                let thens = batch.compactMap(\.then)
                if !thens.isEmpty { callbacks.async { for t in thens { t() } } }
                return
            } catch  where IndexError.isRetryable(error) {
                // On disk rather than in memory: a stop or a crash loses nothing, and nothing
                // is given up.
                if keepInJournal(batch) {
                    if fullSince != nil { logger.notice("index writer: rows kept in the journal again") }
                    return
                }
                let full = IndexError.isDiskFull(error)
                if fullSince == nil {
                    fullSince = .now()
                    logger.warning(
                        "index writer: \(full ? "the disk is full; asking retention for room" : "cannot write (\(error)); trying again")"
                    )
                }
                if !full || onNoSpace?() != true { Thread.sleep(forTimeInterval: 1) }
                // Not forever: a stop must end. Rows lost here leave files recovery removes
                // (or segments left *writing*, which recovery completes).
                if let since = fullSince,
                    Double(DispatchTime.now().uptimeNanoseconds - since.uptimeNanoseconds) / 1e9 > giveUpSeconds
                {
                    logger.error(
                        "index writer: could not write for \(Int(giveUpSeconds)) s (\(error)); dropped \(writes.count) writes"
                    )
                    droppedWrites.add(writes.count, ordering: .relaxed)
                    forget(writes)
                    return
                }
            } catch {
                break
            }
        }
        // One write is at fault (a constraint, a row gone meanwhile): keep the others.
        for item in batch {
            do {
                let inserted = try store.apply([item.write])
                for (ref, id) in inserted { ref.publish(id) }
                if let t = item.then { callbacks.async(execute: t) }
            } catch {
                logger.error("index writer: dropped a write the index refused: \(error)")
                droppedWrites.add(1, ordering: .relaxed)
                forget([item.write])
            }
        }
    }

    /// Dropped sample-entry inserts: their rows will never be there, so the refs are abandoned
    /// (a segmenter using one ends its connection, and the next one hands the entry over
    /// again) and forgotten.
    func forget(_ writes: [RecordingWrite]) {
        for case .insertSampleEntry(let entry, let ref) in writes where ref.value == nil {
            ref.abandon()
            entries.withLock { if $0[entry.box] === ref { $0[entry.box] = nil } }
        }
    }
}
