import Foundation
import NVRIndex
import NVRPlayback
import NVRTime
import TestSupport
import Testing

/// The page against a real `nvr serve` recording real RTSP cameras: in Debian's chromium
/// (Tests/Browser/page_test.py, playwright from .build/test-venv), and a live viewer that stops
/// reading, which must not cost the recording a frame.
@Suite(.serialized, .tags(.system)) struct PageTests {
    static var python: String { TestEnvironment.repoRoot + "/.build/test-venv/bin/python" }

    @Test func thePagePlaysLiveAndRecordedVideoAndEventsInChromium() throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"),
            "chromium is missing: run scripts/install-deps.sh test")
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.python),
            "playwright is missing: run scripts/install-deps.sh test")
        let front = try RTSPCameraFixture()
        // The yard camera records H.265 (which Chromium cannot play through MSE) and has an
        // H.264 sub-stream: the grid plays that one.
        var o = RTSPCameraFixture.Options()
        o.pattern = "smpte"
        o.codec = "h265"
        let yard = try RTSPCameraFixture(o)
        var small = RTSPCameraFixture.Options()
        small.pattern = "smpte"
        small.width = 320
        small.height = 180
        let yardSub = try RTSPCameraFixture(small)
        let s = try LiveChangeTests.Served()
        for (name, cam, sub) in [("front", front, nil), ("yard", yard, yardSub)] {
            let options = sub.map { #","options":{"substream_url":"\#($0.url)"}"# } ?? ""
            let a = try s.api(
                "POST", "/api/cameras", json: #"{"name":"\#(name)","plugin":"rtsp","url":"\#(cam.url)"\#(options)}"#)
            #expect(a.status == 201, "\(a.body)")
        }
        // Twelve seconds of footage, and an event in it (as the motion detector would make).
        Thread.sleep(forTimeInterval: 12)
        let index = try IndexDatabase(path: s.root + "/Storage/index.sqlite")
        let frontID = try #require(try index.camera(named: "front")?.id)
        let now = Time90k.now()
        let event = try index.insertEvent(
            EventRecord(
                cameraID: frontID, start90k: now - 7 * 90_000, end90k: now - 5 * 90_000, type: "motion",
                source: .motion, preRoll90k: 2 * 90_000, postRoll90k: 2 * 90_000))
        let shots = TestEnvironment.repoRoot + "/.build/test-screenshots"
        try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)
        let r = try runProcess(
            Self.python,
            [
                TestEnvironment.repoRoot + "/Tests/Browser/page_test.py", "--base", "http://127.0.0.1:\(s.port)",
                "--user", "boss", "--password", "correct horse", "--cameras", "front,yard",
                "--event-id", String(event.id!), "--event-camera", "front", "--shots", shots,
            ])
        print(r.stdout)
        #expect(r.status == 0, "the page failed in chromium:\n\(r.stdout)\n\(r.stderr.suffix(3000))")
    }

    @Test func aViewerThatStopsReadingCostsTheRecordingNothing() throws {
        // Noise at 6 Mbit/s: 15 MB in 20 s, more than the kernel's socket buffers hold.
        var o = RTSPCameraFixture.Options()
        o.pattern = "snow"
        o.kbps = 6000
        let cam = try RTSPCameraFixture(o, port: 0)
        let s = try LiveChangeTests.Served()
        #expect(
            try s.api("POST", "/api/cameras", json: #"{"name":"cam","plugin":"rtsp","url":"\#(cam.url)"}"#).status
                == 201)
        #expect(TestEnvironment.wait(timeout: 15) { s.state("cam").hasPrefix("streaming") })

        // A viewer that reads its first bytes, then nothing for 20 s (a tiny receive buffer, so
        // the server's writes back up at once).
        let ws = try RawWebSocket(port: s.port, path: "/api/cameras/cam/live", token: s.token, receiveBuffer: 4096)
        let hello = try ws.readMessages(seconds: 3)
        #expect(hello.contains { $0.text?.contains("\"type\":\"init\"") == true }, "\(hello.map(\.summary))")
        let rss0 = Self.rss(s.process.processIdentifier)
        Thread.sleep(forTimeInterval: 20)
        let rss1 = Self.rss(s.process.processIdentifier)
        // Reading again: it is told it fell behind, and gets the newest key frame.
        let after = try ws.readMessages(seconds: 4)
        #expect(after.contains { $0.text?.contains("\"type\":\"skip\"") == true }, "\(after.prefix(20).map(\.summary))")
        #expect(after.filter { $0.binary > 0 }.count > 10)
        ws.close()

        // The recording went on without a gap all along, and the server did not buffer for it.
        let now = Time90k.now()
        let r = try s.api("GET", "/api/cameras/cam/timeline?start=\(now - 40 * 90_000)&end=\(now)")
        let slices =
            ((try JSONSerialization.jsonObject(with: Data(r.body.utf8)) as? [String: Any])?["slices"]
                as? [[String: Any]]) ?? []
        #expect(slices.count == 1, "one continuous slice: \(slices)")
        #expect(rss1 - rss0 < 32 << 20, "nvr serve grew by \((rss1 - rss0) >> 20) MB while the viewer did not read")
    }

    @Test func aViewerOfACameraNoOneWatchedGetsItsGOPSoFarAtOnce() throws {
        // A 4-s GOP, on a clock the test reads: key frames at t0, t0 + 4 s, …
        let work = TestEnvironment.tempDir("gop")
        defer { TestEnvironment.cleanup(work) }
        var o = RTSPCameraFixture.Options()
        o.fps = 25
        o.gopSeconds = 4
        o.pattern = "flash"
        o.extraArguments = ["--flash-period", "1000", "--t0-file", work + "/t0"]
        let cam = try RTSPCameraFixture(o, port: 0)
        let s = try LiveChangeTests.Served()
        #expect(
            try s.api("POST", "/api/cameras", json: #"{"name":"cam","plugin":"rtsp","url":"\#(cam.url)"}"#).status
                == 201)
        #expect(TestEnvironment.wait(timeout: 15) { s.state("cam").hasPrefix("streaming") })
        let t0Text = (try? String(contentsOfFile: work + "/t0", encoding: .utf8)) ?? ""
        let t0 = try #require(Double(t0Text.trimmingCharacters(in: .whitespacesAndNewlines)), "t0: \(t0Text)")
        // Recorded for a while, watched by no one; then a viewer comes 2–2.5 s into a GOP.
        Thread.sleep(forTimeInterval: 6)
        let phase = (Date().timeIntervalSince1970 - t0).truncatingRemainder(dividingBy: 4)
        Thread.sleep(forTimeInterval: (2 - phase + 4).truncatingRemainder(dividingBy: 4))
        let ws = try RawWebSocket(port: s.port, path: "/api/cameras/cam/live", token: s.token, receiveBuffer: 1 << 20)
        defer { ws.close() }
        let first = try ws.readMessages(seconds: 0.5)
        // The GOP so far (about 50 frames, sent at once), not only what the camera sent since
        // (at most 13 frames in 0.5 s, and none before the next key frame, 1.5 s away).
        #expect(first.contains { $0.text?.contains("\"type\":\"init\"") == true }, "\(first.prefix(5).map(\.summary))")
        let frames = first.filter { $0.binary > 0 }.count - 1  // less the init segment
        #expect(frames >= 40, "\(frames) frames in the first 0.5 s")
    }

    static func rss(_ pid: Int32) -> Int { processRSS(pid) }

    @Test func theGridGetsTheSubStreamAnH265CameraItsH264One() throws {
        // An H.265 main stream (Chromium cannot play it through MSE) with an H.264 sub-stream.
        var main = RTSPCameraFixture.Options()
        main.codec = "h265"
        var small = RTSPCameraFixture.Options()
        small.width = 320
        small.height = 180
        let big = try RTSPCameraFixture(main, port: 0)
        let sub = try RTSPCameraFixture(small, port: 0)
        let s = try LiveChangeTests.Served()
        let body = #"{"name":"cam","plugin":"rtsp","url":"\#(big.url)","options":{"substream_url":"\#(sub.url)"}}"#
        #expect(try s.api("POST", "/api/cameras", json: body).status == 201)
        #expect(TestEnvironment.wait(timeout: 15) { s.state("cam").hasPrefix("streaming") })
        func first(_ query: String) throws -> String {
            let ws = try RawWebSocket(
                port: s.port, path: "/api/cameras/cam/live\(query)", token: s.token, receiveBuffer: 1 << 20)
            defer { ws.close() }
            var seen: [RawWebSocket.Message] = []
            for _ in 0..<10 where !seen.contains(where: { $0.text?.contains("\"init\"") == true }) {
                seen += try ws.readMessages(seconds: 1)
            }
            return seen.first { $0.text?.contains("\"init\"") == true }?.text
                ?? "no init in \(seen.prefix(5).map(\.summary))"
        }
        let m = try first("")
        let g = try first("?stream=sub")
        #expect(
            m.contains("\"stream\":\"main\"") && (m.contains("\"codec\":\"hvc1") || m.contains("\"codec\":\"hev1"))
                && m.contains("\"width\":640"), "\(m)")
        #expect(
            g.contains("\"stream\":\"sub\"") && g.contains("\"codec\":\"avc1") && g.contains("\"width\":320"), "\(g)")
        #expect(throws: (any Error).self) {
            _ = try RawWebSocket(
                port: s.port, path: "/api/cameras/cam/live?stream=tiny", token: s.token, receiveBuffer: 4096)
        }
        // A viewer stays through a change of the camera: told it waits while the camera is
        // disabled, then given the new session's stream — on the same socket.
        let ws = try RawWebSocket(port: s.port, path: "/api/cameras/cam/live", token: s.token, receiveBuffer: 1 << 20)
        defer { ws.close() }
        #expect(try ws.readMessages(seconds: 2).contains { $0.text?.contains("\"init\"") == true })
        #expect(try s.api("PATCH", "/api/cameras/cam", json: #"{"enabled":false}"#).status == 200)
        var seen = try ws.readMessages(seconds: 4)
        #expect(seen.contains { $0.text?.contains("\"waiting\"") == true }, "\(seen.suffix(5).map(\.summary))")
        #expect(try s.api("PATCH", "/api/cameras/cam", json: #"{"enabled":true}"#).status == 200)
        seen = []
        for _ in 0..<15 where !seen.contains(where: { $0.text?.contains("\"init\"") == true }) {
            seen += try ws.readMessages(seconds: 1)
        }
        #expect(seen.contains { $0.text?.contains("\"init\"") == true }, "\(seen.suffix(5).map(\.summary))")
        // Only the NVR's own page may open it from a browser.
        #expect(throws: (any Error).self) {
            _ = try RawWebSocket(
                port: s.port, path: "/api/cameras/cam/live", token: s.token, receiveBuffer: 4096,
                origin: "http://evil.example")
        }
        try RawWebSocket(
            port: s.port, path: "/api/cameras/cam/live", token: s.token, receiveBuffer: 4096,
            origin: "http://127.0.0.1:\(s.port)"
        ).close()
    }

    @Test func theServedPageIsTheWebFolderLockedDown() async throws {
        let root = TestEnvironment.tempDir("page")
        defer { TestEnvironment.cleanup(root) }
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let storage = StorageLayout(root: root)
        let server = try await TestServer(
            index: try IndexDatabase(path: storage.indexPath), storage: storage, maxViewSeconds: 3600)
        let web = TestEnvironment.repoRoot + "/web"
        let files = try FileManager.default.contentsOfDirectory(atPath: web).filter { !$0.hasPrefix(".") }.sorted()
        #expect(files.contains("index.html") && files.contains("app.js"))
        for f in files {
            let a = try await server.get(f == "index.html" ? "/" : "/app/\(f)")
            #expect(a.status == 200, "\(f)")
            // scripts/embed-web.py copies web/ into WebAssets.swift; run it after editing web/.
            #expect(
                a.body == FileManager.default.contents(atPath: web + "/" + f),
                "\(f) differs from what the server sends: run scripts/embed-web.py")
            #expect(a.header("Content-Security-Policy")?.contains("script-src 'self'") == true)
            #expect(a.header("X-Content-Type-Options") == "nosniff")
            let etag = try #require(a.header("ETag"))
            #expect(
                try await server.get(f == "index.html" ? "/" : "/app/\(f)", headers: ["If-None-Match": etag]).status
                    == 304)
        }
        #expect(try await server.get("/app/nothing.js").status == 404)
        #expect(try await server.get("/app/..%2Fnvr.toml").status == 404)
    }
}

/// A WebSocket client that can stop reading (what a stalled browser tab does): the handshake,
/// then frames parsed by hand.
final class RawWebSocket {
    struct Message {
        var text: String?
        var binary: Int
        var summary: String { text ?? "binary \(binary)" }
    }
    let fd: Int32
    private var buffer: [UInt8] = []

    init(port: Int, path: String, token: String, receiveBuffer: Int32, origin: String? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var size = receiveBuffer
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else { throw FixtureError("cannot connect: \(errno)") }
        var tv = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let request =
            "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer \(token)\r\n"
            + (origin.map { "Origin: \($0)\r\n" } ?? "") + "\r\n"
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
        let deadline = Date(timeIntervalSinceNow: 5)
        while Date() < deadline {
            fill()
            if let end = find([13, 10, 13, 10]) {
                let head = String(decoding: buffer[..<end], as: UTF8.self)
                buffer.removeFirst(end + 4)
                guard head.hasPrefix("HTTP/1.1 101") else { throw FixtureError("no upgrade: \(head)") }
                return
            }
        }
        throw FixtureError("no answer to the upgrade")
    }

    private func fill() {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = recv(fd, &chunk, chunk.count, 0)
        if n > 0 { buffer += chunk[..<n] }
    }

    private func find(_ pattern: [UInt8]) -> Int? {
        guard buffer.count >= pattern.count else { return nil }
        for i in 0...(buffer.count - pattern.count) where buffer[i..<(i + pattern.count)].elementsEqual(pattern) {
            return i
        }
        return nil
    }

    /// Reads whole messages (frames of a message joined) for `seconds`.
    func readMessages(seconds: Double) throws -> [Message] {
        var out: [Message] = []
        var pending: (opcode: UInt8, data: [UInt8])?
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            fill()
            while buffer.count >= 2 {
                let fin = buffer[0] & 0x80 != 0
                let opcode = buffer[0] & 0x0F
                var length = Int(buffer[1] & 0x7F)
                var at = 2
                if length == 126 {
                    guard buffer.count >= 4 else { break }
                    length = Int(buffer[2]) << 8 | Int(buffer[3])
                    at = 4
                } else if length == 127 {
                    guard buffer.count >= 10 else { break }
                    length = buffer[2..<10].reduce(0) { $0 << 8 | Int($1) }
                    at = 10
                }
                guard buffer.count >= at + length else { break }
                let payload = Array(buffer[at..<(at + length)])
                buffer.removeFirst(at + length)
                if opcode == 0 {
                    pending?.data += payload
                } else if opcode == 1 || opcode == 2 {
                    pending = (opcode, payload)
                } else {
                    continue
                }
                if fin, let p = pending {
                    out.append(
                        p.opcode == 1
                            ? Message(text: String(decoding: p.data, as: UTF8.self), binary: 0)
                            : Message(text: nil, binary: p.data.count))
                    pending = nil
                }
            }
        }
        return out
    }

    func close() { Glibc.close(fd) }
}
