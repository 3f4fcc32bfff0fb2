import Foundation
import NVRIndex
import NVRIndexPostgres
import NVRTime
import TestSupport
import Testing

@testable import NVRCluster

/// Playback of another node's footage without its storage mounted: node a runs in a mount
/// namespace where node b's storage root is an empty tmpfs (as on another machine), so it
/// fetches b's segment files from b over HTTP, in byte ranges, with the nodes' key; and
/// shows b's camera live by relaying b's live view.
@Suite(.serialized, .tags(.system)) struct PeerFootageTests {
    /// A live view's upgrade with curl, for `seconds`: the reply's head and the raw WebSocket
    /// bytes after it.
    static func watch(port: Int, camera: String, headers: [String], seconds: Int, https: Bool = false) throws -> (
        head: String, body: [UInt8]
    ) {
        let out = TestEnvironment.tempDir("live") + ".bin"
        defer { unlink(out) }
        _ = try runProcess(
            "/usr/bin/curl",
            [
                "-s", "-i", "-N", "--max-time", String(seconds), "-o", out, "-H", "Connection: Upgrade", "-H",
                "Upgrade: websocket",
                "-H", "Sec-WebSocket-Version: 13", "-H", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
            ]
                + headers.flatMap { ["-H", $0] }
                + (https
                    ? ["-k", "https://127.0.0.1:\(port)/api/cameras/\(camera)/live"]
                    : ["http://127.0.0.1:\(port)/api/cameras/\(camera)/live"]))
        let bytes = [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: out))) ?? Data())
        guard let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else {
            return (String(decoding: bytes, as: UTF8.self), [])
        }
        return (String(decoding: bytes[..<end.lowerBound], as: UTF8.self), Array(bytes[end.upperBound...]))
    }

    /// A camera's complete segments, oldest first.
    static func complete(_ index: PostgresIndex, camera: Int64) -> [SegmentRecord] {
        ((try? index.segments(cameraID: camera)) ?? []).filter { $0.state == .complete }.sorted {
            $0.start90k < $1.start90k
        }
    }

    @Test func aNodePlaysFootageItFetchesFromTheNodeThatRecordedIt() throws {
        let setup = try ClusterSetup("peer-footage", cameras: 1) { _ in "yard" }
        defer { TestEnvironment.cleanup(setup.folder) }
        let (url, folder, index) = (setup.url, setup.folder, setup.index)
        #expect(try setup.nvr("camera", "set", "yard", "--node", "b").status == 0)
        let camID = try #require(try index.camera(named: "yard")?.id)
        let b = try FailoverTests.Node("b", folder: folder, indexURL: url, viaFlag: false)
        let a = try FailoverTests.Node("a", folder: folder, indexURL: url, viaFlag: false, hiding: b.root)
        func logs() -> String { [a, b].map { "--- \($0.name):\n\($0.logText.suffix(3000))" }.joined(separator: "\n") }
        func complete() -> [SegmentRecord] { Self.complete(index, camera: camID) }
        #expect(TestEnvironment.wait(timeout: 60) { complete().count >= 4 }, "\(logs())")
        let segs = complete()
        #expect(segs.allSatisfy { $0.node == "b" })
        let bearer = try setup.token("peer")

        // a does not see b's storage.
        let listed = try a.get("/api/nodes", token: bearer)
        let body = try #require(listed.stdout.split(separator: "\n").first.map { Data($0.utf8) })
        let nodes = try #require(
            (try JSONSerialization.jsonObject(with: body) as? [String: Any])?["nodes"] as? [[String: Any]])
        #expect(
            nodes.first { $0["name"] as? String == "b" }?["storageMountedHere"] as? Bool == false, "\(listed.stdout)")

        // a plays b's first two segments: fetched from b, then read from its copies.
        let early = Array(segs.prefix(2))
        let file = folder + "/early.mp4"
        let played = try a.get(
            "/api/cameras/yard/view.mp4?start=\(early[0].start90k)&end=\(early[1].end90k)", token: bearer, to: file)
        #expect(played.stdout.hasSuffix("200"), "\(played.stdout.suffix(300)); \(logs())")
        let frames = try h264Frames(file)
        #expect(frames >= early.reduce(0) { $0 + $1.frames } && frames > 0, "\(frames) frames")
        for s in early {
            let copy = a.root + "/Storage/peer-cache/b/" + s.path
            #expect(FileManager.default.fileExists(atPath: copy), "\(copy)")
            let original = b.root + "/Storage/" + s.path
            #expect(FileManager.default.contentsEqual(atPath: copy, andPath: original), "\(s.path)")
        }

        // b's route: only with the nodes' key; byte ranges; HEAD.
        let key = try #require(try index.setting("cluster.node_key"))
        let first = try #require(early[0].id)
        let got = folder + "/got"
        /// The status and the body's bytes.
        func fromB(_ extra: [String]) throws -> (status: String, body: Data) {
            let r = try runProcess(
                "/usr/bin/curl",
                ["-s", "-o", got, "-w", "%{http_code}"] + extra + [
                    "http://127.0.0.1:\(b.port)/api/node/segments/\(first)"
                ])
            return (r.stdout, (try? Data(contentsOf: URL(fileURLWithPath: got))) ?? Data())
        }
        let original = try Data(contentsOf: URL(fileURLWithPath: b.root + "/Storage/" + early[0].path))
        #expect(try fromB([]).status == "401")
        #expect(try fromB(["-H", "X-NVR-Node-Key: \(String(key.reversed()))"]).status == "401")
        let whole = try fromB(["-H", "X-NVR-Node-Key: \(key)"])
        #expect(whole.status == "200" && whole.body == original)
        let ranged = try fromB(["-H", "X-NVR-Node-Key: \(key)", "-H", "Range: bytes=100-199"])
        #expect(ranged.status == "206" && ranged.body == original[100..<200], "\(ranged.status) \(ranged.body.count)")
        #expect(try fromB(["-H", "X-NVR-Node-Key: \(key)", "-H", "Range: bytes=\(original.count)-"]).status == "416")
        let head = try runProcess(
            "/usr/bin/curl",
            ["-s", "-I", "-H", "X-NVR-Node-Key: \(key)", "http://127.0.0.1:\(b.port)/api/node/segments/\(first)"])
        #expect(head.stdout.lowercased().contains("content-length: \(original.count)"), "\(head.stdout)")

        // b's camera live on a: b's live view, relayed (the init message, the init segment, frames).
        let live = try Self.watch(
            port: a.port, camera: "yard",
            headers: ["Authorization: Bearer \(bearer)", "Origin: http://127.0.0.1:\(a.port)"],
            seconds: 8)
        #expect(live.head.hasPrefix("HTTP/1.1 101"), "\(live.head); \(logs())")
        #expect(live.body.firstRange(of: Array("\"type\":\"init\"".utf8)) != nil, "\(live.body.count) bytes")
        #expect(
            live.body.firstRange(of: Array("ftyp".utf8)) != nil && live.body.count > 20_000, "\(live.body.count) bytes")
        // b's live view takes the nodes' key from another node (no user, no Origin), not a
        // wrong one (refused before the upgrade).
        let right = try Self.watch(port: b.port, camera: "yard", headers: ["X-NVR-Node-Key: \(key)"], seconds: 3)
        #expect(right.head.hasPrefix("HTTP/1.1 101") && right.body.count > 1000, "\(right.head)")
        let wrong = try Self.watch(
            port: b.port, camera: "yard", headers: ["X-NVR-Node-Key: \(String(key.reversed()))"], seconds: 3)
        #expect(wrong.head.hasPrefix("HTTP/1.1 4") && wrong.body.isEmpty, "\(wrong.head)")

        // b gone: what a copied still plays; the rest fails, saying why.
        b.stop(signal: SIGKILL)
        let again = try a.get(
            "/api/cameras/yard/view.mp4?start=\(early[0].start90k)&end=\(early[1].end90k)", token: bearer, to: file)
        #expect(again.stdout.hasSuffix("200"), "\(again.stdout.suffix(300))")
        let late = segs[3]
        let missing = try a.get("/api/cameras/yard/view.mp4?start=\(late.start90k)&end=\(late.end90k)", token: bearer)
        #expect(
            !missing.stdout.hasSuffix("200") && missing.stdout.contains("did not send it"),
            "\(missing.stdout.suffix(500))")
        a.stop(signal: SIGINT)
        #expect(a.process?.terminationStatus == 0, "\(a.logText.suffix(2000))")
    }

    /// Nodes that serve HTTPS (`[http] tls_cert`, a self-signed certificate each) and advertise
    /// `https://` URLs: each publishes its certificate in the index, and another node reaches it
    /// trusting exactly that certificate, whatever the host name. a (without b's storage) plays
    /// b's footage fetched over HTTPS and relays b's live view over `wss://`; the question asked
    /// during an outage is answered over HTTPS; with another certificate published for b, a
    /// fetches nothing from b.
    @Test func nodesServingHTTPSTrustExactlyTheCertificateEachPublished() throws {
        let setup = try ClusterSetup("peer-https", cameras: 1) { _ in "gate" }
        defer { TestEnvironment.cleanup(setup.folder) }
        let (url, folder, index) = (setup.url, setup.folder, setup.index)
        // Certificates as `nvr tls self-signed` makes them (they may not sign others: the nodes
        // pin them, they do not take them as authorities).
        for name in ["a", "b"] {
            let made = try runProcess(
                TestEnvironment.nvrExecutable,
                ["tls", "self-signed", "--out-dir", folder + "/tls-\(name)", "--address", "127.0.0.1"])
            #expect(made.status == 0, "\(made.stderr)")
        }
        #expect(try setup.nvr("camera", "set", "gate", "--node", "b").status == 0)
        let camID = try #require(try index.camera(named: "gate")?.id)
        let b = try FailoverTests.Node("b", folder: folder, indexURL: url, viaFlag: false, tls: folder + "/tls-b")
        let a = try FailoverTests.Node(
            "a", folder: folder, indexURL: url, viaFlag: false, hiding: b.root, tls: folder + "/tls-a")
        func logs() -> String { [a, b].map { "--- \($0.name):\n\($0.logText.suffix(3000))" }.joined(separator: "\n") }
        func complete() -> [SegmentRecord] { Self.complete(index, camera: camID) }
        #expect(TestEnvironment.wait(timeout: 60) { complete().count >= 4 }, "\(logs())")
        let segs = complete()
        let bCert = try String(contentsOfFile: folder + "/tls-b/cert.pem", encoding: .utf8)
        let aCert = try String(contentsOfFile: folder + "/tls-a/cert.pem", encoding: .utf8)
        let published = try #require(try index.setting(PeerTrust.settingKey(node: "b")), "\(logs())")
        #expect(
            try PeerTrust.certificates(pem: published) == [try #require(try PeerTrust.certificates(pem: bCert).first)])
        #expect(
            try PeerTrust.certificates(pem: try #require(try index.setting(PeerTrust.settingKey(node: "a"))))
                == PeerTrust.certificates(pem: aCert))
        let bearer = try setup.token("peer")

        // Footage fetched over HTTPS.
        let file = folder + "/early.mp4"
        let played = try a.get(
            "/api/cameras/gate/view.mp4?start=\(segs[0].start90k)&end=\(segs[0].end90k)", token: bearer, to: file)
        #expect(played.stdout.hasSuffix("200"), "\(played.stdout.suffix(300)); \(logs())")
        #expect(try h264Frames(file) >= segs[0].frames)
        let copy = a.root + "/Storage/peer-cache/b/" + segs[0].path
        #expect(FileManager.default.contentsEqual(atPath: copy, andPath: b.root + "/Storage/" + segs[0].path))

        // The live view relayed over wss://.
        let live = try Self.watch(
            port: a.port, camera: "gate",
            headers: ["Authorization: Bearer \(bearer)", "Origin: https://127.0.0.1:\(a.port)"], seconds: 8,
            https: true)
        #expect(live.head.hasPrefix("HTTP/1.1 101"), "\(live.head); \(logs())")
        #expect(
            live.body.firstRange(of: Array("ftyp".utf8)) != nil && live.body.count > 20_000, "\(live.body.count) bytes")

        // The outage question, over HTTPS: answered trusting b's certificate, not a's.
        let key = try #require(try index.setting("cluster.node_key"))
        let answer = PeerQuestion.ask(
            "https://127.0.0.1:\(b.port)", key: key, timeout: 5, pinned: try PeerTrust.certificates(pem: bCert))
        #expect(
            answer == PeerQuestion.Answer(node: "b", reachesIndex: true, cameras: [camID]),
            "\(String(describing: answer))")
        #expect(
            PeerQuestion.ask(
                "https://127.0.0.1:\(b.port)", key: key, timeout: 5, pinned: try PeerTrust.certificates(pem: aCert))
                == nil)
        #expect(PeerQuestion.ask("https://127.0.0.1:\(b.port)", key: key, timeout: 5) == nil, "no trust, no answer")
        let fromA = PeerQuestion.ask(
            "https://127.0.0.1:\(a.port)", key: key, timeout: 5, pinned: try PeerTrust.certificates(pem: aCert))
        #expect(fromA?.node == "a" && fromA?.reachesIndex == true, "\(String(describing: fromA))")

        // Another certificate published for b (as if someone stood in its place): a no longer
        // fetches from it, once it has read the index again (every 5 s).
        try index.setSetting(PeerTrust.settingKey(node: "b"), aCert)
        Thread.sleep(forTimeInterval: 6)
        let refused = try a.get(
            "/api/cameras/gate/view.mp4?start=\(segs[2].start90k)&end=\(segs[2].end90k)", token: bearer)
        #expect(
            !refused.stdout.hasSuffix("200") && refused.stdout.contains("did not answer"),
            "\(refused.stdout.suffix(500))")
        #expect(!FileManager.default.fileExists(atPath: a.root + "/Storage/peer-cache/b/" + segs[2].path))
        // Nor relays its live view: the viewer is answered, and gets no footage.
        let untrusted = try Self.watch(
            port: a.port, camera: "gate",
            headers: ["Authorization: Bearer \(bearer)", "Origin: https://127.0.0.1:\(a.port)"], seconds: 4,
            https: true)
        #expect(untrusted.head.hasPrefix("HTTP/1.1 101"), "\(untrusted.head)")
        #expect(untrusted.body.firstRange(of: Array("ftyp".utf8)) == nil, "\(untrusted.body.count) bytes relayed")
        a.stop(signal: SIGINT)
        b.stop(signal: SIGINT)
        #expect(a.process?.terminationStatus == 0, "\(a.logText.suffix(2000))")
    }
}
