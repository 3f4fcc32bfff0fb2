import Foundation

/// A few megabytes kept in a file of their own in the storage root, given back the moment
/// the disk is full. Freeing space means deleting segments, and deleting starts with a write
/// to the index (the row is marked first, see design/crash-safety.md): on a disk with not one
/// byte free, SQLite cannot commit that mark and nothing could ever be deleted again. The
/// reserve gives it the room; it is made again once retention has freed space.
package final class SpaceReserve: @unchecked Sendable {
    // @unchecked Sendable: `lock` guards every use of the file.
    let path: String
    package let bytes: Int
    private let lock = NSLock()

    package init(root: String, bytes: Int = 8 << 20) {
        path = (root as NSString).appendingPathComponent(".space-reserve")
        self.bytes = bytes
    }

    /// Makes the reserve if it is missing (quietly: with too little room it tries again next time).
    package func ensure() {
        lock.lock()
        defer { lock.unlock() }
        var st = stat()
        if stat(path, &st) == 0 && Int(st.st_size) >= bytes { return }
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        // Real blocks, not a sparse file: posix_fallocate, else written zeros.
        if posix_fallocate(fd, 0, off_t(bytes)) != 0 {
            let zeros = [UInt8](repeating: 0, count: 1 << 20)
            var written = 0
            while written < bytes {
                let n = zeros.withUnsafeBytes { write(fd, $0.baseAddress, min($0.count, bytes - written)) }
                if n <= 0 {
                    ftruncate(fd, 0)
                    return
                }
                written += n
            }
        }
        _ = fsync(fd)
    }

    /// Gives the reserve back to the file system; true if there was one.
    @discardableResult
    package func release() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return unlink(path) == 0
    }
}
