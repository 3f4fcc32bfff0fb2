import Foundation
import NVRIndex
import NVRIndexPostgres
import NVRPlayback

/// A node's storage root carries a random id (`<root>/.nvr-node-id`), also in the node's row:
/// another node that finds a file with the same id at the same path has that storage mounted,
/// and reads its footage there (design/scale-out.md).
public enum NodeStorage {
    public static let idFile = ".nvr-node-id"

    /// The root's id, made on first use.
    public static func identity(root: String) throws -> String {
        if let id = existingIdentity(root: root) { return id }
        let path = root + "/" + idFile
        let id = UUID().uuidString.lowercased()
        do { try (id + "\n").write(toFile: path, atomically: true, encoding: .utf8) } catch {
            throw IndexError("cannot write the storage id \(path): \(error)")
        }
        return id
    }

    /// The root's id if it has one (a node recorded into it).
    public static func existingIdentity(root: String) -> String? {
        guard let text = try? String(contentsOfFile: root + "/" + idFile, encoding: .utf8) else { return nil }
        let id = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return id.isEmpty ? nil : id
    }

    /// Whether the storage a node's row describes is mounted here, at the same path.
    public static func isMounted(root: String, id: String) -> Bool { existingIdentity(root: root) == id }

    /// Tells `storage` which other nodes' storage is mounted here (from their rows).
    public static func refresh(_ storage: StorageLayout, me: String?, nodes: [NodeRecord]) {
        var mounted: [String: String] = [:]
        for n in nodes where n.name != me && isMounted(root: n.storageRoot, id: n.storageID) {
            mounted[n.name] = n.storageRoot
        }
        storage.nodes.set(me: me, mounted: mounted)
    }
}
