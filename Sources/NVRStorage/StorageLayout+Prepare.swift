import Foundation
import NVRPlayback

extension StorageLayout {
    /// Creates the root and recordings folders.
    public func prepare() throws {
        do {
            try FileManager.default.createDirectory(
                atPath: recordingsDir, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        } catch {
            throw ConfigError("cannot create storage folder \(recordingsDir): \(plainDescription(error))")
        }
        // The root holds the index (camera passwords, user hashes) and private video: owner
        // only, also for a root made by an older version.
        chmod(root, 0o700)
        for f in [indexPath, indexPath + "-wal", indexPath + "-shm"] where FileManager.default.fileExists(atPath: f) {
            chmod(f, 0o600)
        }
    }

}
