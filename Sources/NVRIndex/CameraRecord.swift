import Foundation
import GRDB

/// A camera: its plugin and the plugin's JSON config.
public struct CameraRecord: Codable, Sendable, Equatable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "camera"
    public var id: Int64?
    public var name: String
    public var plugin: String
    public var config: String
    public var enabled: Bool
    public var created90k: Int64
    /// (v8) Set when the camera was removed but its recordings kept.
    public var removed90k: Int64?
    /// (v16) The node that records this camera when it is up (several nodes sharing a
    /// PostgreSQL index: design/scale-out.md); nil: any node.
    public var preferredNode: String?

    enum CodingKeys: String, CodingKey {
        case id, name, plugin, config, enabled, created90k, removed90k
        case preferredNode = "preferred_node"
    }

    public init(
        id: Int64? = nil, name: String, plugin: String, config: String, enabled: Bool = true, created90k: Int64,
        removed90k: Int64? = nil, preferredNode: String? = nil
    ) {
        self.id = id
        self.name = name
        self.plugin = plugin
        self.config = config
        self.enabled = enabled
        self.created90k = created90k
        self.removed90k = removed90k
        self.preferredNode = preferredNode
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}
