import NVRIndex
import NVRIndexPostgres

/// What one node should take and give up, from what it sees of the cluster: cameras pinned to
/// a live node go to it; the others are shared out, each live node taking up to
/// ceil(cameras ÷ live nodes). Every node computes its own part from the same rows; the lease
/// table's conditional insert settles races.
struct LeasePlan {
    var acquire: [Int64] = []
    var release: [Int64] = []

    init(node: String, liveNodes: Set<String>, cameras: [CameraRecord], leases: [Int64: LeaseRecord]) {
        var pinnedHere: [Int64] = []
        var shared: [Int64] = []
        var elsewhere: Set<Int64> = []
        for c in cameras {
            guard let id = c.id else { continue }
            if let p = c.preferredNode, liveNodes.contains(p) {
                if p == node { pinnedHere.append(id) } else { elsewhere.insert(id) }
            } else {
                shared.append(id)
            }
        }
        let enabled = Set(cameras.compactMap(\.id))
        let mine = Set(leases.values.filter { $0.node == node }.map(\.cameraID))
        // Held but no longer ours: disabled or removed, or pinned to another live node.
        release = mine.filter { !enabled.contains($0) || elsewhere.contains($0) }.sorted()
        let fair = (shared.count + liveNodes.count - 1) / max(liveNodes.count, 1)
        let sharedMine = shared.filter { mine.contains($0) }
        if sharedMine.count > fair {
            // One at a time, the newest first, only while another live node has room.
            let loads = Dictionary(grouping: leases.values.filter { shared.contains($0.cameraID) }, by: \.node)
                .mapValues(\.count)
            if liveNodes.contains(where: { $0 != node && loads[$0, default: 0] < fair }), let last = sharedMine.max() {
                release.append(last)
            }
        }
        let free = { (id: Int64) in leases[id] == nil }
        acquire = pinnedHere.filter(free)
        let room = fair - sharedMine.count
        if room > 0 {
            // Each node starts at its own place in the list, so nodes racing for free cameras
            // mostly ask for different ones.
            let candidates = shared.filter(free).sorted()
            let h = UInt64(bitPattern: PostgresIndex.fnv1a(node))  // the same place in every process
            let offset = candidates.isEmpty ? 0 : Int(h % UInt64(candidates.count))
            let rotated = Array(candidates[offset...] + candidates[..<offset])
            acquire += rotated.prefix(room)
        }
    }
}
