import Foundation
import NVRIndex
import NVRIndexPostgres
import NVRTime
import TestSupport
import Testing

/// Three recorder nodes (processes) on one PostgreSQL, twelve GStreamer cameras: the cameras
/// spread over the nodes, a `kill -9`'d node's cameras record on the others within 15 s, every
/// node plays every camera (the killed node's footage too: its storage is at the same path on
/// this machine, which the nodes detect by its storage id), and no camera is ever recorded by
/// two nodes at once.
@Suite(.serialized, .tags(.system)) struct FailoverTests {
    /// One `nvr serve --node` with its own storage root and HTTP port.
    final class Node {
        let name: String
        let root: String
        let port: Int
        let config: String
        let log: String
        var process: Process?
        /// The folder of the node's `cert.pem` and `key.pem` when it serves HTTPS.
        let tls: String?

        /// `port` and `advertise` default to a free port and that port's URL. With `hiding`, the
        /// node runs in a mount namespace of its own where that folder is an empty tmpfs: as on
        /// another machine, it does not see what another node stores there. With `tls`, it
        /// serves HTTPS with that folder's `cert.pem` and `key.pem`.
        init(
            _ name: String, folder: String, indexURL: String, viaFlag: Bool, port: Int? = nil, advertise: String? = nil,
            hiding: String? = nil, tls: String? = nil
        ) throws {
            self.tls = tls
            self.name = name
            root = folder + "/" + name
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            let port = port ?? TestEnvironment.freePort()
            self.port = port
            config = try writeConfig(
                root: root, plugins: TestEnvironment.buildDir, segmentSeconds: 3, httpBind: "127.0.0.1:\(port)")
            // Still in writeConfig's [http] table.
            var extra = tls.map { "tls_cert = \"\($0)/cert.pem\"\ntls_key = \"\($0)/key.pem\"\n" } ?? ""
            extra += "[index]\nurl = \"\(indexURL)\"\n"
            if !viaFlag {
                let url = advertise ?? "\(tls == nil ? "http" : "https")://127.0.0.1:\(port)"
                extra += "[cluster]\nnode = \"\(name)\"\nadvertise_url = \"\(url)\"\n"
            }
            try append(extra, to: config)
            log = root + "/serve.log"
            FileManager.default.createFile(atPath: log, contents: nil)
            let p = Process()
            let serve =
                [TestEnvironment.nvrExecutable, "serve", "--no-demo", "--config", config]
                + (viaFlag ? ["--node", name] : [])
            if let hiding {
                p.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
                p.arguments =
                    [
                        "--mount", "--propagation", "private", "--", "/bin/sh", "-c",
                        "mount -t tmpfs hidden \"$0\" && exec \"$@\"", hiding,
                    ]
                    + serve
            } else {
                p.executableURL = URL(fileURLWithPath: serve[0])
                p.arguments = Array(serve.dropFirst())
            }
            let out = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            p.standardError = out
            p.standardOutput = out
            try p.run()
            process = p
        }

        deinit { stop(signal: SIGKILL) }

        func stop(signal: Int32) {
            guard let p = process else { return }
            if p.isRunning { kill(p.processIdentifier, signal) }
            p.waitUntilExit()
        }

        var logText: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

        func get(_ path: String, token: String, to file: String? = nil) throws -> ProcessResult {
            guard tls != nil else { return try httpGet(port: port, path, token: token, to: file) }
            // Its own certificate: curl is any client here, not another node.
            return try runProcess(
                "/usr/bin/curl",
                [
                    "-s", "-k", "-o", file ?? "/dev/stdout", "-w", "\n%{http_code}", "-H",
                    "Authorization: Bearer \(token)",
                    "https://127.0.0.1:\(port)\(path)",
                ])
        }
    }

    /// `n` small cameras (10 frames a second: twelve of them on two cores).
    static func cameras(_ n: Int) throws -> [RTSPCameraFixture] {
        var small = RTSPCameraFixture.Options.small()
        small.fps = 10
        return try (0..<n).map { _ in try RTSPCameraFixture(small) }
    }

    /// The config of a machine that only administers (adds cameras, makes tokens): the index, no node.
    static func cliConfig(folder: String, url: String) throws -> String {
        try FileManager.default.createDirectory(atPath: folder + "/cli", withIntermediateDirectories: true)
        let cli = try writeConfig(root: folder + "/cli", plugins: TestEnvironment.buildDir)
        try append("[index]\nurl = \"\(url)\"\n", to: cli)
        return cli
    }

    @Test func killANodeAndItsCamerasMoveAndEveryNodePlaysEverything() throws {
        // The cameras, added from any machine sharing the index.
        let setup = try ClusterSetup("failover", cameras: 12) { String(format: "cam%02d", $0) }
        defer { TestEnvironment.cleanup(setup.folder) }
        let (url, folder, index, ids) = (setup.url, setup.folder, setup.index, setup.ids)
        func nvr(_ args: String...) throws -> ProcessResult { try setup.nvr(args) }

        let nodes = try [
            Node("a", folder: folder, indexURL: url, viaFlag: false),
            Node("b", folder: folder, indexURL: url, viaFlag: false),
            Node("c", folder: folder, indexURL: url, viaFlag: true),
        ]
        func logs() -> String { nodes.map { "--- \($0.name):\n\($0.logText.suffix(3000))" }.joined(separator: "\n") }

        // Spread 4±1 each, and every camera recording.
        let spread = TestEnvironment.wait(timeout: 60) {
            let leases = (try? index.leases()) ?? []
            let per = Dictionary(grouping: leases, by: \.node).mapValues(\.count)
            return leases.count == 12 && per.count == 3 && per.values.allSatisfy { (3...5).contains($0) }
        }
        let leases = try index.leases()
        #expect(spread, "leases: \(Dictionary(grouping: leases, by: \.node).mapValues(\.count)); \(logs())")
        let recording = TestEnvironment.wait(timeout: 40) {
            ids.keys.allSatisfy { id in
                ((try? index.segments(cameraID: id)) ?? []).contains { $0.state == .complete }
            }
        }
        #expect(recording, "not every camera recorded a segment; \(logs())")
        let listed = try nvr("nodes", "--json")
        #expect(listed.status == 0 && listed.stdout.contains("\"name\" : \"c\""), "\(listed.stdout)\(listed.stderr)")

        // kill -9 the node with the most cameras.
        let byNode = Dictionary(grouping: try index.leases(), by: \.node)
        let victimName = try #require(byNode.max { $0.value.count < $1.value.count }?.key)
        let victim = try #require(nodes.first { $0.name == victimName })
        let moved = Set(byNode[victimName, default: []].map(\.cameraID))
        let before = try Dictionary(uniqueKeysWithValues: moved.map { ($0, try index.segments(cameraID: $0)) })
        victim.stop(signal: SIGKILL)
        let killed = Time90k.now()

        // Each of its cameras: a segment by another node, started within 15 s of the kill.
        var takeover: [Int64: Double] = [:]
        let movedOn = TestEnvironment.wait(timeout: 45) {
            for id in moved where takeover[id] == nil {
                if let s = ((try? index.segments(cameraID: id)) ?? []).first(where: {
                    $0.node != victimName && $0.node != nil && $0.start90k >= killed - 90_000
                }) {
                    takeover[id] = Double(s.start90k - killed) / 90_000
                }
            }
            return takeover.count == moved.count
        }
        #expect(movedOn, "cameras \(moved.subtracting(takeover.keys).sorted()) never recorded again; \(logs())")
        let slowest = takeover.values.max() ?? 0
        print("failover: \(moved.count) cameras of node \(victimName) recording elsewhere after at most \(slowest) s")
        #expect(slowest <= 15, "a camera took \(slowest) s to record again")

        // Let the survivors record a little more, so ranges span the failover.
        Thread.sleep(forTimeInterval: 4)
        let survivors = nodes.filter { $0.name != victimName }
        let bearer = try setup.token("failover")
        // The API and /metrics say the same as nvr nodes.
        let api = try survivors[0].get("/api/nodes", token: bearer)
        let body = try #require(api.stdout.split(separator: "\n").first.map { Data($0.utf8) })
        let answer = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        let listedNodes = try #require(answer["nodes"] as? [[String: Any]])
        #expect(answer["index"] as? String == "postgresql" && answer["node"] as? String == survivors[0].name)
        #expect(listedNodes.compactMap { $0["name"] as? String } == ["a", "b", "c"])
        #expect(listedNodes.first { $0["name"] as? String == victimName }?["live"] as? Bool == false)
        #expect(
            listedNodes.filter { $0["name"] as? String != victimName }.allSatisfy {
                $0["storageMountedHere"] as? Bool == true
            })
        let metrics = try survivors[0].get("/metrics", token: bearer)
        #expect(metrics.stdout.contains("nvr_node_up{node=\"\(victimName)\"} 0"), "\(metrics.stdout.suffix(1500))")
        #expect(metrics.stdout.contains("nvr_node_cameras{node=\"\(survivors[0].name)\"}"))

        for node in survivors {
            for (id, name) in ids.sorted(by: { $0.key < $1.key }) {
                let segs = try index.segments(cameraID: id).filter { $0.state == .complete }
                guard let first = segs.first, let last = segs.last else {
                    Issue.record("camera \(name) has no complete segment")
                    continue
                }
                let tl = try node.get(
                    "/api/cameras/\(name)/timeline?start=\(first.start90k)&end=\(last.end90k)", token: bearer)
                #expect(
                    tl.stdout.hasSuffix("\n200"), "node \(node.name) /timeline of \(name): \(tl.stdout.suffix(300))")
                guard moved.contains(id) else { continue }
                // The killed node's footage, and one range across the failover, as one file.
                let old = before[id, default: []].filter { $0.state == .complete }
                guard let oldFirst = old.first, let oldLast = old.last else { continue }
                let file = folder + "/\(node.name)-\(name).mp4"
                let theirs = try node.get(
                    "/api/cameras/\(name)/view.mp4?start=\(oldFirst.start90k)&end=\(oldLast.end90k)", token: bearer,
                    to: file)
                #expect(theirs.stdout.hasSuffix("200"), "node \(node.name) view.mp4 of \(victimName)'s \(name)")
                let theirFrames = try h264Frames(file)
                #expect(theirFrames >= old.reduce(0) { $0 + $1.frames } && theirFrames > 0)
                let across = try node.get(
                    "/api/cameras/\(name)/view.mp4?start=\(oldFirst.start90k)&end=\(last.end90k)", token: bearer,
                    to: file)
                #expect(across.stdout.hasSuffix("200"))
                let after = segs.filter { $0.node != victimName }
                let acrossFrames = try h264Frames(file)
                #expect(
                    !after.isEmpty && acrossFrames >= (old + after).reduce(0) { $0 + $1.frames },
                    "a range recorded by two nodes plays as one file")
            }
        }

        // Never two writers: no camera's segments from two nodes overlap in time.
        for (id, name) in ids {
            let segs = try index.segments(cameraID: id).sorted { $0.start90k < $1.start90k }
            for (a, b) in zip(segs, segs.dropFirst()) where a.node != b.node {
                #expect(
                    a.end90k <= b.start90k,
                    "camera \(name): \(a.node ?? "-") until \(a.end90k), \(b.node ?? "-") from \(b.start90k)")
            }
        }

        // The killed node comes back: its recovery finishes its own unfinished rows and touches
        // no other node's (they are recording); `nvr db check` on each node sees its own files.
        let others = Set(try index.allSegments().filter { $0.node != victimName }.compactMap(\.id))
        let back = try Node(victimName, folder: folder, indexURL: url, viaFlag: victimName == "c")
        #expect(
            TestEnvironment.wait(timeout: 30) { back.logText.contains("nvr serve: recording") }, "\(back.logText)")
        #expect(TestEnvironment.wait(timeout: 20) { ((try? index.leases()) ?? []).contains { $0.node == victimName } })
        let still = Set(try index.allSegments().compactMap(\.id))
        #expect(others.isSubset(of: still), "rows of other nodes removed: \(others.subtracting(still).sorted())")
        #expect(try index.segments(state: .writing).filter { $0.node == victimName && $0.start90k < killed }.isEmpty)
        for node in survivors + [back] {
            let check = try runProcess(TestEnvironment.nvrExecutable, ["db", "check", "--config", node.config])
            #expect(check.status == 0, "node \(node.name): \(check.stdout.prefix(2000))\(check.stderr)")
        }

        // A node stopped cleanly gives its cameras back at once.
        for node in survivors + [back] {
            node.stop(signal: SIGINT)
            #expect(node.process?.terminationStatus == 0, "\(node.logText.suffix(2000))")
        }
        #expect(try index.leases().isEmpty)
        let atEnd = try nvr("nodes")
        let rows = atEnd.stdout.split(separator: "\n").dropFirst().map { $0.split(separator: " ").map(String.init) }
        #expect(rows.map { $0.first ?? "" } == ["a", "b", "c"], "\(atEnd.stdout)")
        #expect(rows.allSatisfy { $0.count > 5 && $0[5] == "-" }, "no cameras held: \(atEnd.stdout)")
    }

    /// A node cut off from PostgreSQL (a blackhole between them) stops its cameras before the
    /// other node takes them: each camera's last file written by the cut-off node was last
    /// written before the other node's first segment of it began.
    @Test func aNodeCutOffFromPostgreSQLStopsBeforeItsCamerasAreTaken() throws {
        let server = try PostgresFixture()
        let url = try server.makeDatabase()
        let proxy = try TCPProxyFixture(target: "127.0.0.1:\(server.port)")
        let viaProxy = url.replacingOccurrences(of: ":\(server.port)/", with: ":\(proxy.port)/")
        let cameras = try Self.cameras(4)
        let folder = TestEnvironment.tempDir("partition")
        defer { TestEnvironment.cleanup(folder) }
        let index = try PostgresIndex(location: try PostgresLocation(url: url, environment: [:]))
        let cli = try Self.cliConfig(folder: folder, url: url)
        for (i, cam) in cameras.enumerated() {
            let add = try runProcess(
                TestEnvironment.nvrExecutable,
                ["camera", "add", "p\(i)", "--plugin", "rtsp", "--url", cam.url, "--config", cli])
            #expect(add.status == 0, "\(add.stderr)")
        }
        _ = try runProcess(TestEnvironment.nvrExecutable, ["retention", "set", "--min-free", "0%", "--config", cli])
        let ids = Dictionary(uniqueKeysWithValues: try index.cameras().map { ($0.id!, $0.name) })
        let a = try Node("a", folder: folder, indexURL: viaProxy, viaFlag: false)
        let b = try Node("b", folder: folder, indexURL: url, viaFlag: false)
        func logs() -> String { [a, b].map { "--- \($0.name):\n\($0.logText.suffix(3000))" }.joined(separator: "\n") }
        let settled = TestEnvironment.wait(timeout: 60) {
            let leases = (try? index.leases()) ?? []
            let onA = leases.filter { $0.node == "a" }.map(\.cameraID)
            return leases.count == 4 && !onA.isEmpty
                && onA.allSatisfy { id in ((try? index.segments(cameraID: id)) ?? []).contains { $0.state == .complete }
                }
        }
        #expect(settled, "\(logs())")
        let onA = Set(try index.leases().filter { $0.node == "a" }.map(\.cameraID))

        proxy.cut()
        let cut = Time90k.now()
        // b takes a's cameras once their leases lapse on the server.
        var firstByB: [Int64: Int64] = [:]
        let taken = TestEnvironment.wait(timeout: 40) {
            for id in onA where firstByB[id] == nil {
                if let s = ((try? index.segments(cameraID: id)) ?? []).first(where: {
                    $0.node == "b" && $0.start90k >= cut - 90_000
                }) {
                    firstByB[id] = s.start90k
                }
            }
            return firstByB.count == onA.count
        }
        #expect(taken, "b never recorded a's cameras \(onA.subtracting(firstByB.keys).sorted()); \(logs())")
        // a asked b, which reaches PostgreSQL: a is the one cut off, so it stops (an outage of
        // PostgreSQL itself would have it record on: NodeOutageTests).
        #expect(
            a.logText.contains("cannot confirm its leases in time: stopping cameras")
                && a.logText.contains("(node b reaches PostgreSQL)"), "\(logs())")
        #expect(!a.logText.contains("PostgreSQL answers no node"), "\(logs())")
        // a's files of each camera: the last byte written before b's first frame.
        for id in onA {
            guard let name = ids[id], let bStart = firstByB[id] else { continue }
            let dir = a.root + "/Storage/recordings/\(name)"
            var newest = 0.0
            let files = FileManager.default.enumerator(atPath: dir)
            while let f = files?.nextObject() as? String {
                guard f.hasSuffix(".mp4") else { continue }
                let m =
                    (try? FileManager.default.attributesOfItem(atPath: dir + "/" + f)[.modificationDate] as? Date)?
                    .timeIntervalSince1970 ?? 0
                newest = max(newest, m)
            }
            let bSeconds = Double(bStart) / 90_000
            print("partition: camera \(name): a last wrote \(bSeconds - newest) s before b's first frame")
            #expect(
                newest > 0 && newest < bSeconds,
                "camera \(name): a wrote until \(newest), b recorded from \(bSeconds); \(logs())")
        }

        // Mended: a joins again, and the index holds no overlap between the two nodes.
        proxy.mend()
        let rejoined = TestEnvironment.wait(timeout: 40) { ((try? index.leases()) ?? []).contains { $0.node == "a" } }
        #expect(rejoined, "\(logs())")
        for (id, name) in ids {
            let segs = try index.segments(cameraID: id).sorted { $0.start90k < $1.start90k }
            for (x, y) in zip(segs, segs.dropFirst()) where x.node != y.node {
                #expect(
                    x.end90k <= y.start90k,
                    "camera \(name): \(x.node ?? "-") until \(x.end90k), \(y.node ?? "-") from \(y.start90k)")
            }
        }
        a.stop(signal: SIGINT)
        b.stop(signal: SIGINT)
    }
}
