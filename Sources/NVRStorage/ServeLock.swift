import Foundation
import NVRPlayback

/// An advisory lock on `<root>/serve.lock`, held by `nvr serve` for as long as it records.
/// It keeps two servers off one storage root, and tells `nvr db check` that segments marked
/// *writing* are being recorded right now rather than left over from a crash.
public final class ServeLock: Sendable {
    private let fd: Int32

    /// Takes the lock; throws if another `nvr serve` holds it.
    public init(storage: StorageLayout) throws {
        let path = storage.root + "/serve.lock"
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw ConfigError("cannot open \(path): \(String(cString: strerror(errno)))") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw ConfigError("another nvr serve is already recording into \(storage.root)")
        }
    }

    deinit { close(fd) }

    /// True while some process holds the lock (a server is recording into `storage`).
    public static func isHeld(storage: StorageLayout) -> Bool {
        let fd = open(storage.root + "/serve.lock", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return false
        }
        return true
    }
}
