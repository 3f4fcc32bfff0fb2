import NVRIndex
import NVRIndexPostgres
import Testing

@testable import NVRCluster

/// How a node decides which cameras to take and give up (no server: rows as a node sees them).
struct LeasePlanTests {
    static func cameras(_ n: Int, pinned: [Int64: String] = [:]) -> [CameraRecord] {
        (1...n).map { i in
            CameraRecord(
                id: Int64(i), name: "cam\(i)", plugin: "rtsp", config: "{}", created90k: 0,
                preferredNode: pinned[Int64(i)])
        }
    }
    static func leases(_ holders: [Int64: String]) -> [Int64: LeaseRecord] {
        holders.reduce(into: [:]) { r, e in
            r[e.key] = LeaseRecord(cameraID: e.key, node: e.value, token: 1, expiresIn: 5)
        }
    }

    @Test func freeCamerasAreSharedOutACeilingEach() {
        let live: Set = ["a", "b", "c"]
        for node in live {
            let plan = LeasePlan(node: node, liveNodes: live, cameras: Self.cameras(12), leases: [:])
            #expect(plan.acquire.count == 4 && plan.release.isEmpty)
        }
        // 13 cameras: at most 5 each; a node with 4 takes one more only while one is free.
        let held = Dictionary(uniqueKeysWithValues: (1...12).map { (Int64($0), ["a", "b", "c"][($0 - 1) % 3]) })
        let plan = LeasePlan(node: "a", liveNodes: live, cameras: Self.cameras(13), leases: Self.leases(held))
        #expect(plan.acquire == [13] && plan.release.isEmpty)
    }

    @Test func aNodeOverItsShareGivesOneUpWhileAnotherHasRoom() {
        let all = Dictionary(uniqueKeysWithValues: (1...12).map { (Int64($0), "a") })
        let plan = LeasePlan(
            node: "a", liveNodes: ["a", "b", "c"], cameras: Self.cameras(12), leases: Self.leases(all))
        #expect(plan.release == [12] && plan.acquire.isEmpty)
        // Alone, it keeps them all.
        let alone = LeasePlan(node: "a", liveNodes: ["a"], cameras: Self.cameras(12), leases: Self.leases(all))
        #expect(alone.release.isEmpty)
    }

    @Test func pinnedCamerasGoToTheirNodeWhileItIsLive() {
        let cams = Self.cameras(4, pinned: [1: "b", 2: "gone"])
        // Camera 1 belongs to b: a gives it up; b takes it even over its share.
        let a = LeasePlan(node: "a", liveNodes: ["a", "b"], cameras: cams, leases: Self.leases([1: "a"]))
        #expect(a.release == [1])
        let b = LeasePlan(node: "b", liveNodes: ["a", "b"], cameras: cams, leases: Self.leases([3: "b", 4: "b"]))
        #expect(b.acquire == [1], "its pinned camera although it has its share of the others")
        let bFree = LeasePlan(node: "b", liveNodes: ["a", "b"], cameras: cams, leases: [:])
        #expect(bFree.acquire.first == 1, "its pinned camera first")
        // Pinned to a node that is not live (b is not, here): shared like the rest.
        let shared = LeasePlan(node: "a", liveNodes: ["a"], cameras: cams, leases: [:])
        #expect(Set(shared.acquire) == [1, 2, 3, 4])
    }

    @Test func aCameraDisabledOrRemovedIsGivenUp() {
        let plan = LeasePlan(
            node: "a", liveNodes: ["a"], cameras: Self.cameras(2), leases: Self.leases([1: "a", 7: "a"]))
        #expect(plan.release == [7] && plan.acquire == [2])
    }
}
