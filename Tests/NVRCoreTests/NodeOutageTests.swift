import Foundation
import NVRIndex
import NVRIndexPostgres
import NVRTime
import TestSupport
import Testing

/// PostgreSQL stopped for 30 s under two recorder nodes: each node asks the other, both say
/// they cannot reach it, so the cameras record on past their lease deadline; once PostgreSQL is
/// back each node renews the leases nobody took and writes the rows it kept. No hole, no
/// camera moved, every row complete, and the outage's footage plays.
@Suite(.serialized, .tags(.system)) struct NodeOutageTests {
    /// Waits until both nodes hold cameras and every camera has a complete segment.
    static func spread(_ index: PostgresIndex, cameras: Set<Int64>) -> Bool {
        TestEnvironment.wait(timeout: 60) {
            let leases = (try? index.leases()) ?? []
            return leases.count == cameras.count && Set(leases.map(\.node)).count == 2
                && cameras.allSatisfy { id in
                    ((try? index.segments(cameraID: id)) ?? []).contains { $0.state == .complete }
                }
        }
    }

    @Test func postgreSQLStoppedForThirtySecondsLeavesNoHoleUnderNodes() throws {
        let setup = try ClusterSetup("node-outage", cameras: 4) { "o\($0)" }
        defer { TestEnvironment.cleanup(setup.folder) }
        let (server, url, folder, index, ids) = (setup.server, setup.url, setup.folder, setup.index, setup.ids)
        let nodes = try [
            FailoverTests.Node("a", folder: folder, indexURL: url, viaFlag: false),
            FailoverTests.Node("b", folder: folder, indexURL: url, viaFlag: false),
        ]
        func logs() -> String { nodes.map { "--- \($0.name):\n\($0.logText.suffix(4000))" }.joined(separator: "\n") }
        #expect(Self.spread(index, cameras: Set(ids.keys)), "\(logs())")
        let holders = Dictionary(uniqueKeysWithValues: try index.leases().map { ($0.cameraID, $0.node) })
        // What the nodes ask each other, with the nodes' key (no user): its name, whether it
        // reaches PostgreSQL, the cameras it holds. Nothing without the key.
        let key = try #require(try index.setting("cluster.node_key"))
        func askNode(_ node: FailoverTests.Node, key: String = key) throws -> String {
            let r = try runProcess(
                "/usr/bin/curl",
                ["-s", "--max-time", "5", "-H", "X-NVR-Node-Key: \(key)", "http://127.0.0.1:\(node.port)/api/node"])
            return r.stdout
        }
        func answer(_ node: FailoverTests.Node) throws -> (node: String?, index: String?, cameras: Set<Int64>) {
            let json = try? JSONSerialization.jsonObject(with: Data(try askNode(node).utf8)) as? [String: Any]
            let cameras = (json?["cameras"] as? [Any])?.compactMap { ($0 as? NSNumber)?.int64Value } ?? []
            return (json?["node"] as? String, json?["index"] as? String, Set(cameras))
        }
        for node in nodes {
            let a = try answer(node)
            #expect(a.node == node.name && a.index == "reachable", "\(a)")
            #expect(a.cameras == Set(holders.filter { $0.value == node.name }.keys), "\(a)")
            #expect(try askNode(node, key: "wrong").contains("\"unauthorized\""))
        }

        server.stop()
        let down = Time90k.now()
        Thread.sleep(forTimeInterval: 5)
        for node in nodes {
            let a = try answer(node)
            #expect(a.node == node.name && a.index == "unreachable", "\(a)")
        }
        Thread.sleep(forTimeInterval: 25)
        try server.start()
        let up = Time90k.now()

        // Every camera's rows of the outage arrive, and it records on after it, on the same node.
        let caughtUp = TestEnvironment.wait(timeout: 40) {
            ids.keys.allSatisfy { id in
                ((try? index.segments(cameraID: id)) ?? []).contains {
                    $0.state == .complete && $0.start90k > up + 3 * 90_000
                }
            }
        }
        #expect(caughtUp, "\(logs())")
        let after = Dictionary(uniqueKeysWithValues: try index.leases().map { ($0.cameraID, $0.node) })
        #expect(after == holders, "no camera moved: \(holders) before, \(after) after; \(logs())")
        for node in nodes {
            #expect(node.logText.contains("PostgreSQL answers no node: cameras"), "node \(node.name): \(logs())")
            #expect(node.logText.contains("kept their leases"), "node \(node.name): \(logs())")
            #expect(!node.logText.contains("could not write for"), "node \(node.name) dropped rows: \(logs())")
            #expect(!node.logText.contains("refused writes"), "node \(node.name): \(logs())")
        }

        let bearer = try setup.token("outage")
        let from = down - 3 * 90_000
        let to = up + 3 * 90_000
        for (id, name) in ids.sorted(by: { $0.key < $1.key }) {
            let segs = try index.segments(cameraID: id).sorted { $0.start90k < $1.start90k }.filter {
                $0.end90k > from && $0.start90k < to
            }
            #expect(segs.allSatisfy { $0.state == .complete }, "camera \(name): \(segs.map(\.state))")
            #expect(
                segs.allSatisfy { $0.node == holders[id] },
                "camera \(name): recorded by \(Set(segs.compactMap(\.node))), held by \(holders[id] ?? "-")")
            #expect(
                segs.contains { $0.start90k > down + 5 * 90_000 && $0.end90k < up }, "camera \(name): no outage rows")
            var worst: Int64 = 0
            for (x, y) in zip(segs, segs.dropFirst()) { worst = max(worst, y.start90k - x.end90k) }
            let first = segs.first?.start90k ?? to
            let last = segs.last?.end90k ?? from
            print(
                "node outage: camera \(name) on \(holders[id] ?? "-"): \(segs.count) segments, largest gap \(Double(worst) / 90_000) s"
            )
            #expect(
                first <= from && last >= to, "camera \(name): footage from \(first) to \(last), wanted \(from)…\(to)")
            #expect(worst <= 90_000 / 2, "camera \(name): a hole of \(Double(worst) / 90_000) s; \(logs())")
            // The outage's footage plays from the other node too.
            let other = try #require(nodes.first { $0.name != holders[id] })
            let file = folder + "/\(name).mp4"
            let got = try other.get("/api/cameras/\(name)/view.mp4?start=\(from)&end=\(to)", token: bearer, to: file)
            #expect(
                got.stdout.hasSuffix("200"), "view.mp4 of \(name) from node \(other.name): \(got.stdout.suffix(300))")
            let frames = try h264Frames(file)
            // 10 frames a second over the range, give or take a tenth.
            let wanted = Int((to - from) / 9_000) * 9 / 10
            #expect(frames >= wanted, "camera \(name): \(frames) frames of \(from)…\(to), wanted \(wanted)")
        }
        for node in nodes {
            node.stop(signal: SIGINT)
            #expect(node.process?.terminationStatus == 0, "\(node.logText.suffix(2000))")
        }
        for node in nodes {
            let check = try runProcess(TestEnvironment.nvrExecutable, ["db", "check", "--config", node.config])
            #expect(check.status == 0, "node \(node.name): \(check.stdout.prefix(2000))\(check.stderr)")
        }
    }

    /// Both nodes record through an outage; then node a is cut off from PostgreSQL and from b
    /// just as PostgreSQL comes back. b counts a as dead and takes its cameras; a, which can ask
    /// nobody, records on. Once a reaches PostgreSQL again it finds those leases taken: it stops
    /// the cameras and the index refuses what it recorded meanwhile. The index never holds two
    /// nodes' footage of one camera at once.
    @Test func aNodeWhoseCamerasWereTakenDuringAnOutageKeepsNoneOfIt() throws {
        let setup = try ClusterSetup("node-outage-taken", cameras: 4) { "t\($0)" }
        defer { TestEnvironment.cleanup(setup.folder) }
        let (server, url, folder, index, ids) = (setup.server, setup.url, setup.folder, setup.index, setup.ids)
        let toIndex = try TCPProxyFixture(target: "127.0.0.1:\(server.port)")
        let aIndexURL = url.replacingOccurrences(of: ":\(server.port)/", with: ":\(toIndex.port)/")
        let bPort = TestEnvironment.freePort()
        let toB = try TCPProxyFixture(target: "127.0.0.1:\(bPort)")
        let a = try FailoverTests.Node("a", folder: folder, indexURL: aIndexURL, viaFlag: false)
        // a asks b through a proxy the test can cut.
        let b = try FailoverTests.Node(
            "b", folder: folder, indexURL: url, viaFlag: false, port: bPort, advertise: "http://127.0.0.1:\(toB.port)")
        func logs() -> String { [a, b].map { "--- \($0.name):\n\($0.logText.suffix(4000))" }.joined(separator: "\n") }
        #expect(Self.spread(index, cameras: Set(ids.keys)), "\(logs())")
        let onA = Set(try index.leases().filter { $0.node == "a" }.map(\.cameraID))

        server.stop()
        let down = Time90k.now()
        #expect(
            TestEnvironment.wait(timeout: 15) { a.logText.contains("PostgreSQL answers no node") },
            "a records on: \(logs())")
        toB.cut()
        toIndex.cut()
        try server.start()
        // b takes a's cameras once it has waited after its own first heartbeat and a's leases
        // have run out.
        var firstByB: [Int64: Int64] = [:]
        let taken = TestEnvironment.wait(timeout: 40) {
            for id in onA where firstByB[id] == nil {
                if let s = ((try? index.segments(cameraID: id)) ?? []).first(where: {
                    $0.node == "b" && $0.start90k > down
                }) {
                    firstByB[id] = s.start90k
                }
            }
            return firstByB.count == onA.count
        }
        #expect(taken, "b never recorded a's cameras: \(logs())")
        Thread.sleep(forTimeInterval: 3)
        let mended = Time90k.now()
        toIndex.mend()
        toB.mend()
        #expect(
            TestEnvironment.wait(timeout: 30) { a.logText.contains("lost the leases of cameras") },
            "a finds its cameras taken: \(logs())")
        // a's rows of the time it recorded on are refused; b's stand.
        #expect(TestEnvironment.wait(timeout: 20) { a.logText.contains("refused writes for cameras") }, "\(logs())")
        Thread.sleep(forTimeInterval: 2)
        for id in onA {
            let segs = try index.segments(cameraID: id).sorted { $0.start90k < $1.start90k }
            let name = ids[id] ?? "?"
            // None of a's rows from the outage on (until the mend: a may take cameras back then).
            let aDuring = segs.filter { $0.node == "a" && $0.start90k > down + 5 * 90_000 && $0.start90k < mended }
            #expect(aDuring.isEmpty, "camera \(name): a's rows from the outage: \(aDuring.map(\.start90k))")
            for (x, y) in zip(segs, segs.dropFirst()) where x.node != y.node {
                #expect(
                    x.end90k <= y.start90k,
                    "camera \(name): \(x.node ?? "-") until \(x.end90k), \(y.node ?? "-") from \(y.start90k); \(logs())"
                )
            }
        }
        a.stop(signal: SIGINT)
        b.stop(signal: SIGINT)
    }

    /// A node killed (SIGKILL) while it records through an outage of PostgreSQL loses none of
    /// it: the rows it could not write wait in its storage root's `index.journal`, and its next
    /// start writes them before recovery, which would otherwise remove their files as files
    /// without rows. (One node: with no other node to ask, an outage is taken as confirmed.)
    @Test func aNodeKilledDuringAnOutageWritesItsRowsAtItsNextStart() throws {
        let setup = try ClusterSetup("node-outage-killed", cameras: 2) { "k\($0)" }
        defer { TestEnvironment.cleanup(setup.folder) }
        let (server, url, folder, index, ids) = (setup.server, setup.url, setup.folder, setup.index, setup.ids)
        var a = try FailoverTests.Node("a", folder: folder, indexURL: url, viaFlag: false)
        var earlierLog = ""
        func logs() -> String { "--- a, killed:\n\(earlierLog.suffix(4000))\n--- a:\n\(a.logText.suffix(4000))" }
        func recording(since t: Int64) -> Bool {
            ids.keys.allSatisfy { id in
                ((try? index.segments(cameraID: id)) ?? []).contains { $0.state == .complete && $0.start90k > t }
            }
        }
        #expect(TestEnvironment.wait(timeout: 60) { recording(since: 0) }, "\(logs())")

        server.stop()
        let down = Time90k.now()
        #expect(
            TestEnvironment.wait(timeout: 15) { a.logText.contains("PostgreSQL answers no node") },
            "a records on: \(logs())")
        Thread.sleep(forTimeInterval: 10)
        let journal = a.root + "/Storage/index.journal"
        let kept = (try? FileManager.default.attributesOfItem(atPath: journal)[.size] as? Int) ?? 0
        #expect(kept > 0, "nothing in \(journal): \(logs())")
        print(
            "node killed in an outage: \(kept) bytes in the journal \(Double(Time90k.now() - down) / 90_000) s into it")
        let killed = Time90k.now()
        a.stop(signal: SIGKILL)
        earlierLog = a.logText
        #expect(earlierLog.contains("keeping them in \(journal)"), "\(logs())")
        try server.start()

        a = try FailoverTests.Node("a", folder: folder, indexURL: url, viaFlag: false)
        #expect(TestEnvironment.wait(timeout: 60) { recording(since: killed + 90_000) }, "\(logs())")
        #expect(a.logText.contains("index journal: wrote"), "\(logs())")
        print(
            a.logText.split(separator: "\n").filter { $0.contains("journal") || $0.contains("recovery") }.joined(
                separator: "\n"))
        #expect(a.logText.contains(" 0 files without rows removed"), "files of the outage removed: \(logs())")
        #expect(((try? FileManager.default.attributesOfItem(atPath: journal)[.size] as? Int) ?? -1) == 0)

        let bearer = try setup.token("killed")
        // From before the outage to the last whole fragment before the kill (3 s segments; the
        // one open at the kill is cut to its last complete fragment by recovery).
        let from = down - 3 * 90_000
        let to = killed - 2 * 90_000
        for (id, name) in ids.sorted(by: { $0.key < $1.key }) {
            let segs = try index.segments(cameraID: id).sorted { $0.start90k < $1.start90k }.filter {
                $0.end90k > from && $0.start90k < to
            }
            #expect(segs.allSatisfy { $0.state == .complete && $0.node == "a" }, "camera \(name): \(segs)")
            var worst: Int64 = 0
            for (x, y) in zip(segs, segs.dropFirst()) { worst = max(worst, y.start90k - x.end90k) }
            let first = segs.first?.start90k ?? to
            let last = segs.last?.end90k ?? from
            print(
                "node killed in an outage: camera \(name): \(segs.count) segments from \(Double(first - down) / 90_000) s to \(Double(last - down) / 90_000) s of the outage (killed at \(Double(killed - down) / 90_000) s), largest gap \(Double(worst) / 90_000) s"
            )
            #expect(first <= from && last >= to, "camera \(name): footage \(first)…\(last), wanted \(from)…\(to)")
            #expect(worst <= 90_000 / 2, "camera \(name): a hole of \(Double(worst) / 90_000) s; \(logs())")
            let file = folder + "/\(name).mp4"
            let got = try a.get("/api/cameras/\(name)/view.mp4?start=\(from)&end=\(to)", token: bearer, to: file)
            #expect(got.stdout.hasSuffix("200"), "view.mp4 of \(name): \(got.stdout.suffix(300))")
            let frames = try h264Frames(file)
            let wanted = Int((to - from) / 9_000) * 9 / 10
            #expect(frames >= wanted, "camera \(name): \(frames) frames of \(from)…\(to), wanted \(wanted)")
        }
        a.stop(signal: SIGINT)
        #expect(a.process?.terminationStatus == 0, "\(a.logText.suffix(2000))")
        let check = try runProcess(TestEnvironment.nvrExecutable, ["db", "check", "--config", a.config])
        #expect(check.status == 0, "\(check.stdout.prefix(2000))\(check.stderr)")
    }
}
