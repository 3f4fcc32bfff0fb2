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

    /// Opens the index under the configured storage root.
    func open() throws -> (NVRConfig, StorageLayout, IndexDatabase) {
        let c = try load()
        let storage = StorageLayout(root: c.storageRoot)
        try refuseRootInForeignRoot(storage)
        announceIfNew(storage, config: c)
        try storage.prepare()
        return (c, storage, try IndexDatabase(path: storage.indexPath))
    }
}
