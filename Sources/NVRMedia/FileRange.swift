import Glibc

/// Whole reads and writes of segment files, as playback and exports do them: a range read in
/// full (a file shorter than the index says is an error), a buffer written in full.
public enum FileRange {
    /// Reads exactly `into.count` bytes of `path` at `offset`.
    public static func read(_ path: String, at offset: Int64, into p: UnsafeMutableRawBufferPointer) throws {
        guard let base = p.baseAddress, !p.isEmpty else { return }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw MediaError.posix(.read, "cannot open \(path)", errno) }
        defer { close(fd) }
        var done = 0
        while done < p.count {
            let r = pread(fd, base + done, p.count - done, off_t(offset + Int64(done)))
            if r < 0 && errno == EINTR { continue }
            guard r > 0 else { break }
            done += r
        }
        guard done == p.count else {
            throw MediaError(.corrupt, "\(path) is shorter than the index says (deleted by retention meanwhile?)")
        }
    }

    /// Writes all of `p` to `fd` (`path` names it in errors; a full disk is `.noSpace`).
    public static func write(_ fd: Int32, _ p: UnsafeRawBufferPointer, path: String) throws {
        guard let base = p.baseAddress else { return }
        var off = 0
        while off < p.count {
            let n = Glibc.write(fd, base + off, p.count - off)
            if n < 0 {
                if errno == EINTR { continue }
                throw MediaError.posix(errno == ENOSPC ? .noSpace : .write, "cannot write \(path)", errno)
            }
            off += n
        }
    }
}
