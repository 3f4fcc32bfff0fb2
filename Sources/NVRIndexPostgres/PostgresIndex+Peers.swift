import Foundation
import NVRIndex

extension PostgresIndex {
    /// The setting that holds the nodes' shared credential.
    static let nodeKeySetting = "cluster.node_key"

    /// The credential nodes present to each other to read footage (`X-NVR-Node-Key`): 32
    /// random bytes, hex, made by the first node that asks and kept in the index, which every
    /// node trusts anyway. Read once per process.
    public func nodeKey() throws -> String {
        if let key = nodeKeyCache.withLock({ $0 }) { return key }
        var bytes = [UInt8](repeating: 0, count: 32)
        var generator = SystemRandomNumberGenerator()
        for i in bytes.indices { bytes[i] = UInt8.random(in: .min ... .max, using: &generator) }
        let made = bytes.map { String(format: "%02x", $0) }.joined()
        let key = try transaction { s -> String in
            try s.execute(
                "INSERT INTO setting (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
                [.text(Self.nodeKeySetting), .text(made)])
            guard
                let key = try s.scalar(
                    String.self, "SELECT value FROM setting WHERE key = ?", [.text(Self.nodeKeySetting)])
            else { throw IndexError("the nodes' key is missing from the index") }
            return key
        }
        nodeKeyCache.withLock { $0 = key }
        return key
    }

    /// One segment by id, any node's.
    public func segment(id: Int64) throws -> SegmentRecord? {
        try autocommit { try $0.fetchAll(SegmentRecord.self, "SELECT * FROM segment WHERE id = ?", [.int(id)]).first }
    }
}
