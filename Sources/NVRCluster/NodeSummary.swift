import NVRIndex
import NVRIndexPostgres

/// A node as `nvr nodes` and `GET /api/nodes` show it.
public struct NodeSummary: Encodable, Sendable, Equatable {
    public var name: String
    /// Heard from within a lease's length.
    public var live: Bool
    public var heartbeatSecondsAgo: Double
    /// The cameras it holds a lease on now, by name.
    public var cameras: [String]
    public var advertiseURL: String?
    public var storageRoot: String
    /// Its storage is mounted on the machine asking (its footage plays here).
    public var storageMountedHere: Bool

    /// Every node of the index, as seen from node `me` (nil: not a node).
    public static func list(_ index: PostgresIndex, me: String?) throws -> [NodeSummary] {
        let names = Dictionary(
            uniqueKeysWithValues: try index.cameras(includeRemoved: true).compactMap { c in c.id.map { ($0, c.name) } })
        let leases = try index.leases()
        return try index.nodes().map { n in
            NodeSummary(
                name: n.name, live: n.heartbeatAge < NodeLeases.Timing().leaseSeconds,
                heartbeatSecondsAgo: (n.heartbeatAge * 10).rounded() / 10,
                cameras: leases.filter { $0.node == n.name }.compactMap { names[$0.cameraID] }.sorted(),
                advertiseURL: n.advertiseURL, storageRoot: n.storageRoot,
                storageMountedHere: n.name == me || NodeStorage.isMounted(root: n.storageRoot, id: n.storageID))
        }
    }
}
