import Foundation
import Logging
import NVRCluster
import NVRIndex
import NVRIndexPostgres
import NVRPlayback

extension NVRConfig {
    /// Where the index is, as `nvr` says it: the PostgreSQL URL (never its password) or the
    /// SQLite file.
    public func indexDescription(_ storage: StorageLayout) -> String {
        indexURL.flatMap { try? PostgresLocation(url: $0, environment: [:]).description } ?? storage.indexPath
    }

    /// The index this configuration names: PostgreSQL at `[index] url`, else SQLite in the
    /// storage root. Opening migrates its schema. With `[cluster] node`, the index serves that
    /// node (its segments stamped with its name, its own storage's queries scoped to them).
    public func openIndex(_ storage: StorageLayout, logger: Logger = Logger(label: "nvr.index")) throws
        -> any IndexStore
    {
        guard let indexURL else { return try IndexDatabase(path: storage.indexPath) }
        let location = try PostgresLocation(url: indexURL, passwordFile: indexPasswordFile)
        if let clusterNode { return try PostgresIndex(location: location, node: clusterNode, logger: logger) }
        let index = try PostgresIndex(location: location, logger: logger)
        // No node named, but this root is a node's (`nvr serve --node`): `nvr db check` and the
        // like then see that node's segments as the root's own.
        guard let id = NodeStorage.existingIdentity(root: storage.root),
            let owner = try index.nodes().first(where: { $0.storageID == id })
        else { return index }
        return try PostgresIndex(location: location, node: owner.name, logger: logger)
    }
}
