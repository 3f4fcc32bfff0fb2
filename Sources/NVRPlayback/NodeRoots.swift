import NVRIndex
import Synchronization

/// Where each recorder node's storage is seen from this machine (design/scale-out.md): a
/// segment carries the node that recorded it, and its file is under that node's root. A node's
/// root counts as mounted here when it holds the storage id the node registered; a node whose
/// root is not mounted is asked for the file over HTTP (`remote`), when this machine is a node.
public final class NodeRoots: Sendable {
    /// A local copy of another node's segment, fetched from that node; throws why not.
    public typealias Remote = @Sendable (_ node: String, _ segment: SegmentRecord) throws -> String

    private let state = Mutex<(me: String?, roots: [String: String])>((nil, [:]))
    private let remote = Mutex<Remote?>(nil)

    public init() {}

    /// This machine's node name, and the other nodes' roots mounted here.
    public func set(me: String?, mounted roots: [String: String]) { state.withLock { $0 = (me, roots) } }

    /// How to fetch footage of nodes whose storage is not mounted here.
    public func setRemote(_ fetch: Remote?) { remote.withLock { $0 = fetch } }

    /// A segment's file: under `own` (this machine's root) or the root of the node that
    /// recorded it, or (with `fetch`) a copy fetched from that node.
    func file(of segment: SegmentRecord, own: String, fetch: Bool) throws -> String {
        guard let node = segment.node else { return own + "/" + segment.path }
        let (me, roots) = state.withLock { $0 }
        if node == me { return own + "/" + segment.path }
        if let root = roots[node] { return root + "/" + segment.path }
        let fetcher = remote.withLock { $0 }
        guard fetch, let fetcher else {
            throw IndexError(
                "this footage was recorded by node \(node), whose storage is not mounted here (mount it at the path node \(node) records to)"
            )
        }
        do { return try fetcher(node, segment) } catch {
            throw IndexError(
                "this footage was recorded by node \(node), whose storage is not mounted here and which did not send it: \(error)"
            )
        }
    }
}
