import ArgumentParser
import Foundation
import Logging
import NVRIndex
import NVRPlayback

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(
        name: .long,
        help: "Config file (default: $NVR_CONFIG, else ./nvr.toml, else /etc/nvr/nvr.toml, else built-in defaults).")
    var config: String?

    func load() throws -> NVRConfig {
        do { return try NVRConfig.load(path: config) } catch { throw CommandFailure("\(error)") }
    }

    /// Opens the configured index (SQLite under the storage root, or PostgreSQL).
    func open() throws -> (NVRConfig, StorageLayout, any IndexStore) {
        let c = try load()
        let storage = StorageLayout(root: c.storageRoot)
        try refuseRootInForeignRoot(storage)
        announceIfNew(storage, config: c)
        try storage.prepare()
        do { return (c, storage, try c.openIndex(storage)) } catch let e as IndexError { throw CommandFailure("\(e)") }
    }
}
