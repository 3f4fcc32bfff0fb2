import ArgumentParser
import Foundation
import Logging
import NVRCluster
import NVRIndex
import NVRIndexPostgres
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
        do {
            let index = try c.openIndex(storage)
            // Footage recorded by other nodes, where their storage is mounted here.
            if let pg = index as? PostgresIndex {
                NodeStorage.refresh(storage, me: c.clusterNode, nodes: try pg.nodes())
            }
            return (c, storage, index)
        } catch let e as IndexError { throw CommandFailure("\(e)") }
    }
}
