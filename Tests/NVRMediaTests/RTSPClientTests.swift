import Foundation
import TestSupport
import Testing

@testable import NVRMedia

@Suite struct RTSPPartsTests {
    @Test func digestMatchesRFC2617Example() {
        var a = RTSPAuthenticator(user: "Mufasa", password: "Circle Of Life")
        a.fixedCNonce = "0a4f113b"
        let accepted = a.challenge(
            #"Digest realm="testrealm@host.com", qop="auth,auth-int", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41""#
        )
        #expect(accepted)
        let h = a.header(method: "GET", uri: "/dir/index.html") ?? ""
        #expect(h.contains(#"response="6629fae49393a05397450978507c4ef1""#), "\(h)")
        #expect(h.contains("nc=00000001") && h.contains(#"opaque="5ccc069c403ebaf9f0171e9517f40e41""#))
    }

    @Test func basicAuthAndUnknownSchemes() {
        var a = RTSPAuthenticator(user: "admin", password: "pw")
        let negotiate = a.challenge("Negotiate abc")
        let basic = a.challenge(#"Basic realm="cam""#)
        let header = a.header(method: "DESCRIBE", uri: "rtsp://x/")
        #expect(!negotiate && basic)
        #expect(header == "Basic YWRtaW46cHc=")
    }

    @Test func parsesSDPAndPictureSize() {
        let sdp = """
            v=0\r
            a=control:*\r
            m=video 0 RTP/AVP 96\r
            a=rtpmap:96 H264/90000\r
            a=framerate:15\r
            a=fmtp:96 packetization-mode=1;sprop-parameter-sets=Z0LAFtoCgL/lwFqDAwNSgAAAAwCAAAAPR4sXUA==,aM48gA==;profile-level-id=42c016\r
            a=control:stream=0\r
            m=audio 0 RTP/AVP 97\r
            a=rtpmap:97 MPEG4-GENERIC/48000/1\r
            a=fmtp:97 streamtype=5;profile-level-id=2;mode=AAC-hbr;config=1188;sizelength=13;indexlength=3;indexdeltalength=3\r
            a=control:stream=1\r
            """
        let parsed = SDP.parse(sdp)
        #expect(parsed.control == "*")
        #expect(parsed.media.count == 2)
        #expect(
            parsed.media[0].encoding == "H264" && parsed.media[0].clockRate == 90000 && parsed.media[0].frameRate == 15)
        #expect(
            parsed.media[1].encoding == "MPEG4-GENERIC" && parsed.media[1].clockRate == 48000
                && parsed.media[1].fmtp["config"] == "1188")
        let ps = SDP.parameterSets([parsed.media[0].fmtp["sprop-parameter-sets"]])
        #expect(SPSParser.size(annexB: ps, codec: .h264).map { [$0.0, $0.1] } == [640, 360])
        #expect(SDP.hexBytes("1188") == [0x11, 0x88])
        let url = try? RTSPURL("rtsp://ad%40min:p%3Ass@cam.local:8554/live?x=1")
        #expect(url?.user == "ad@min" && url?.password == "p:ss" && url?.port == 8554)
        #expect(url?.plain == "rtsp://cam.local:8554/live?x=1")
        #expect(
            url?.resolve("trackID=1", base: "rtsp://cam.local:8554/live/") == "rtsp://cam.local:8554/live/trackID=1")
    }

    @Test func reassemblesFUAAndSTAPA() {
        let d = VideoDepacketizer(codec: .h264)
        // STAP-A with SPS and PPS, then an IDR split over three FU-A fragments.
        let stap: [UInt8] = [24, 0, 2, 0x67, 1, 0, 2, 0x68, 2]
        let fu1: [UInt8] = [0x7C, 0x85, 10, 11]
        let fu2: [UInt8] = [0x7C, 0x05, 12]
        let fu3: [UInt8] = [0x7C, 0x45, 13]
        for p in [stap, fu1, fu2, fu3] { #expect(p.withUnsafeBytes { d.add($0) }) }
        #expect(d.complete && d.isKey)
        #expect(d.au == [0, 0, 0, 2, 0x67, 1, 0, 0, 0, 2, 0x68, 2, 0, 0, 0, 5, 0x65, 10, 11, 12, 13])
        // A lost first fragment drops the access unit instead of writing a broken one.
        d.reset()
        d.markBroken()
        #expect(fu2.withUnsafeBytes { d.add($0) })
        #expect(!d.complete)
    }

    @Test func splitsAACAccessUnits() {
        // Two AU headers (13-bit size, 3-bit index): sizes 3 and 2.
        let p: [UInt8] = [0, 32, 0, 3 << 3, 0, 2 << 3, 1, 2, 3, 4, 5]
        var frames: [[Int]] = []
        let ok = p.withUnsafeBytes {
            AACDepacketizer(sizeLength: 13, indexLength: 3).split($0) { frames.append([$0, $1]) }
        }
        #expect(ok && frames == [[6, 3], [9, 2]])
    }
}

@Suite(.tags(.system)) struct RTSPClientNetworkTests {
    @Test func silentServerTimesOut() throws {
        // Accepts the connection and never answers, like a hung camera.
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = [
            "-c",
            "import socket,time\ns=socket.socket(); s.bind(('127.0.0.1',0)); s.listen()\nprint(s.getsockname()[1], flush=True)\nc=s.accept(); time.sleep(30)",
        ]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        defer {
            p.terminate()
            kill(p.processIdentifier, SIGKILL)
        }
        var line = ""
        while !line.hasSuffix("\n") {
            line += String(decoding: out.fileHandleForReading.readData(ofLength: 1), as: UTF8.self)
        }
        let port = line.trimmingCharacters(in: .whitespacesAndNewlines)
        let started = Date()
        #expect {
            _ = try RTSPClient(url: "rtsp://127.0.0.1:\(port)/stream", timeoutSeconds: 1.5, interrupter: Interrupter())
        } throws: { "\($0)".contains("timed out") }
        #expect(Date().timeIntervalSince(started) < 5)
    }

    @Test func stopInterruptsABusyStream() throws {
        let cam = try RTSPCameraFixture()
        let interrupter = Interrupter()
        let client = try RTSPClient(url: cam.url, timeoutSeconds: 5, interrupter: interrupter)
        #expect(client.streams.first?.summary == "h264 640x360")
        var frames = 0
        DispatchQueue.global().asyncAfter(deadline: .now() + 1.5) { interrupter.stop() }
        #expect {
            while true { try client.read { if $0.stream == 0 { frames += 1 } } }
        } throws: { ($0 as? MediaError)?.kind == .interrupted }
        #expect(frames >= 10)
    }
}
