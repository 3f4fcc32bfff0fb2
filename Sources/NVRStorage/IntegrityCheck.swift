import Foundation
import Logging
import NVRIndex
import NVRMedia
import NVRPlayback

/// Proves the index and the files agree, and mends what it safely can (`nvr db check`).
public struct IntegrityCheck {
    public enum Kind: String, Sendable, Codable {
        case missingFile = "missing-file"  // a row whose file is gone
        case orphanFile = "orphan-file"  // a file no row knows
        case sizeMismatch = "size-mismatch"  // file size differs from the row
        case unreadable = "unreadable"  // (--deep) boxes, frame counts or the first key frame's decode fail
        case leftWriting = "left-writing"  // a row still *writing* (a crash, or serve is running)
        case leftDeleting = "left-deleting"  // a deletion that did not finish
    }

    public struct Problem: Sendable, Codable, Equatable {
        public var kind: Kind
        public var path: String
        public var detail: String
        public var segmentID: Int64?
        /// What --repair did about it, if anything.
        public var repaired: String?
    }

    public let index: any IndexStore
    public let storage: StorageLayout
    public let logger: Logger

    public init(index: any IndexStore, storage: StorageLayout, logger: Logger) {
        self.index = index
        self.storage = storage
        self.logger = logger
    }

    /// Checks every row and every file under recordings/. `deep` also walks each file's
    /// fragments and compares frame counts with the index. `progress(done, total)` is called
    /// as rows are checked.
    /// `holdingLock`: the caller holds the root's serve lock itself (so no server records),
    /// which `ServeLock.isHeld` would take for a server's.
    public func run(
        deep: Bool, repair: Bool, holdingLock: Bool = false, progress: (Int, Int) -> Void = { _, _ in }
    ) throws -> [Problem] {
        // While a server records, its *writing* segments are live, not crash leftovers, and
        // repairing them would cut the files it is writing.
        let serving = !holdingLock && ServeLock.isHeld(storage: storage)
        if repair && serving {
            throw ConfigError("nvr serve is recording into \(storage.root): stop it before --repair")
        }
        // A repair holds the server's lock for its whole length: no server starts meanwhile.
        let held = repair && !holdingLock ? try ServeLock(storage: storage) : nil
        defer { withExtendedLifetime(held) {} }
        var problems: [Problem] = []
        // Files first, then rows: a segment the server starts after the file listing is not
        // listed at all. (One started just before has its file listed and its row committed
        // up to a moment later, by the index writer: `stillThere` gives such fresh files time.)
        var files = Set(listFiles())
        let rows = try index.allSegments()
        for (i, row) in rows.enumerated() {
            progress(i, rows.count)
            let path = storage.absolute(row.path)
            let onDisk = files.remove(row.path) != nil
            switch row.state {
            case .writing:
                if !serving {
                    problems.append(
                        Problem(
                            kind: .leftWriting, path: row.path, detail: "segment row left writing", segmentID: row.id))
                }
                continue
            case .deleting:
                // While a server records, a deletion may be under way (retention, a user's
                // delete); one a crash left is finished when the server next starts.
                if !serving {
                    problems.append(
                        Problem(kind: .leftDeleting, path: row.path, detail: "deletion not finished", segmentID: row.id)
                    )
                }
                continue
            case .complete:
                break
            }
            guard onDisk else {
                problems.append(
                    Problem(kind: .missingFile, path: row.path, detail: "file is missing", segmentID: row.id))
                continue
            }
            let size = fileSize(path)
            if size < 0 {
                // Listed, gone now: deleted meanwhile, or missing (stillThere tells which).
                problems.append(
                    Problem(kind: .missingFile, path: row.path, detail: "file is missing", segmentID: row.id))
                continue
            }
            if size != row.bytes {
                problems.append(
                    Problem(
                        kind: .sizeMismatch, path: row.path, detail: "file has \(size) bytes, index says \(row.bytes)",
                        segmentID: row.id))
                continue
            }
            if deep, let why = deepCheck(row, path: path) {
                problems.append(Problem(kind: .unreadable, path: row.path, detail: why, segmentID: row.id))
            }
        }
        progress(rows.count, rows.count)
        for f in files.sorted() {
            problems.append(Problem(kind: .orphanFile, path: f, detail: "no index row", segmentID: nil))
        }
        if serving { problems = try stillThere(problems) }
        if repair { try mend(&problems) }
        return problems
    }

    /// While a server records and deletes, a problem may be its work in progress: a segment it
    /// deleted (retention, a user's delete) while the check ran, or a file it has just begun
    /// whose row its index writer commits a moment later. Kept: problems of rows still complete
    /// in a fresh listing, and orphans still there, still without a row, and last written
    /// `freshSeconds` ago or more (a file being recorded is written every second or so).
    func stillThere(_ problems: [Problem], freshSeconds: Double = 180) throws -> [Problem] {
        guard !problems.isEmpty else { return problems }
        let rows = try index.allSegments()
        let complete = Set(rows.filter { $0.state == .complete }.compactMap(\.id))
        let known = Set(rows.map(\.path))
        let now = Date()
        return problems.filter { p in
            let path = storage.absolute(p.path)
            switch p.kind {
            case .orphanFile:
                guard !known.contains(p.path),
                    let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate]
                        as? Date
                else { return false }
                return now.timeIntervalSince(modified) >= freshSeconds
            case .missingFile:
                return !FileManager.default.fileExists(atPath: path) && p.segmentID.map(complete.contains) == true
            default:
                // Size, frames, a broken file: only while its row is still complete.
                return p.segmentID.map(complete.contains) ?? true
            }
        }
    }

    /// Compares a file's fragments with the row and its frame index.
    private func deepCheck(_ row: SegmentRecord, path: String) -> String? {
        do {
            let scanned = try SegmentScanner.scan(path: path)
            if scanned.validLength != scanned.fileLength { return "file ends in an incomplete fragment" }
            let frames = scanned.samples.first?.count ?? 0
            if frames != row.frames { return "file holds \(frames) frames, index says \(row.frames)" }
            if let f = try index.frames(segmentID: row.id!), try FrameIndex.decode(f.videoIndex).count != row.frames {
                return "frame index disagrees with the row"
            }
            _ = try FrameDecoder.decodeFirstKeyFrame(path: path)
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// Safe repairs only: nothing is deleted that could still be played.
    private func mend(_ problems: inout [Problem]) throws {
        var unfinished = false
        for i in problems.indices {
            let p = problems[i]
            switch p.kind {
            case .missingFile:
                try index.removeSegments(ids: [p.segmentID!])
                problems[i].repaired = "row removed"
            case .orphanFile:
                let dest = storage.root + "/trash/" + p.path
                try FileManager.default.createDirectory(
                    atPath: (dest as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try? FileManager.default.removeItem(atPath: dest)
                try FileManager.default.moveItem(atPath: storage.absolute(p.path), toPath: dest)
                problems[i].repaired = "moved to trash/\(p.path)"
            case .sizeMismatch, .unreadable:
                // Re-index from the file's own boxes (as crash recovery does).
                try index.markWriting(segmentID: p.segmentID!)
                unfinished = true
                problems[i].repaired = "re-indexed from the file"
            case .leftWriting, .leftDeleting:
                unfinished = true
                problems[i].repaired = "finished by recovery"
            }
        }
        if unfinished {
            let r = try Recovery.run(index: index, storage: storage, logger: logger)
            logger.info(
                "repair: \(r.recovered) segments re-indexed, \(r.dropped) dropped, \(r.deletionsFinished) deletions finished"
            )
        }
    }

    private func listFiles() -> [String] {
        guard let e = FileManager.default.enumerator(atPath: storage.recordingsDir) else { return [] }
        var out: [String] = []
        while let f = e.nextObject() as? String {
            if f.hasSuffix(".mp4") { out.append("recordings/" + f) }
        }
        return out
    }

    private func fileSize(_ path: String) -> Int64 {
        var st = stat()
        return stat(path, &st) == 0 ? Int64(st.st_size) : -1
    }
}
