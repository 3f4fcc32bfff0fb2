import NVRIndex
import Synchronization

/// Where each recorder node's storage is seen from this machine (design/scale-out.md): a
/// segment carries the node that recorded it, and its file is under that node's root. A node's
/// root counts as mounted here when it holds the storage id the node registered.
public final class NodeRoots: Sendable {
    private let state = Mutex<(me: String?, roots: [String: String])>((nil, [:]))

    public init() {}

    /// This machine's node name, and the other nodes' roots mounted here.
    public func set(me: String?, mounted roots: [String: String]) { state.withLock { $0 = (me, roots) } }

    /// The root a node's segments are under, nil for this machine's own; throws when that
    /// node's storage is not mounted here.
    func root(of node: String?) throws -> String? {
        guard let node else { return nil }
        let (me, roots) = state.withLock { $0 }
        if node == me { return nil }
        guard let root = roots[node] else {
            throw IndexError(
                "this footage was recorded by node \(node), whose storage is not mounted here (mount it at the path node \(node) records to)"
            )
        }
        return root
    }
}
