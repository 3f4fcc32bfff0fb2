import Foundation
import TestSupport
import Testing
import TuyaAPI

/// Tuya's cloud signing and LAN framing, checked against values computed independently at test
/// time: Python's hmac/hashlib/zlib for the signature and CRC, the openssl CLI for AES-ECB.
@Suite struct TuyaAPITests {
    /// Python's view of the documented signature.
    static let pythonSigner = """
        import hashlib, hmac, sys
        cid, secret, token, t, nonce, method, body, url = sys.argv[1:9]
        sts = method + "\\n" + hashlib.sha256(body.encode()).hexdigest() + "\\n" + "" + "\\n" + url
        s = cid + token + t + nonce + sts
        print(hmac.new(secret.encode(), s.encode(), hashlib.sha256).hexdigest().upper())
        """

    func python(_ args: [String]) throws -> String {
        let r = try runProcess("/usr/bin/python3", ["-c", Self.pythonSigner] + args)
        #expect(r.status == 0, "\(r.stderr)")
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func signsAGetWithAQueryAndAPostWithABodyLikePython() throws {
        let cid = "4ghy8xkqw2n7vj3m5dpa"
        let secret = "c7a9f1e35b2d48d6a0e4f9b1c3d5e7f9"
        let t = "1763800000123"
        // Token request: GET, query, no access token.
        let tokenURL = TuyaSign.canonicalURL(path: "/v1.0/token", query: [("grant_type", "1")])
        #expect(tokenURL == "/v1.0/token?grant_type=1")
        let getSTS = TuyaSign.stringToSign(method: "GET", url: tokenURL)
        #expect(getSTS == "GET\n\(TuyaSign.emptyBodySHA256)\n\n/v1.0/token?grant_type=1")
        let getSign = TuyaSign.sign(clientID: cid, secret: secret, accessToken: nil, t: t, stringToSign: getSTS)
        #expect(getSign == (try python([cid, secret, "", t, "", "GET", "", tokenURL])))
        #expect(getSign.count == 64 && getSign == getSign.uppercased())

        // A business GET whose query arrives unsorted.
        let timeline = TuyaSign.canonicalURL(
            path: "/v1.0/users/ay1/devices/d1/storage/stream/hls",
            query: [("time_l_t", "1763803600"), ("time_g_t", "1763800000")])
        #expect(timeline == "/v1.0/users/ay1/devices/d1/storage/stream/hls?time_g_t=1763800000&time_l_t=1763803600")
        let token = "a1b2c3d4e5f6"
        let tlSign = TuyaSign.sign(
            clientID: cid, secret: secret, accessToken: token, t: t, nonce: "n-42",
            stringToSign: TuyaSign.stringToSign(method: "GET", url: timeline))
        #expect(tlSign == (try python([cid, secret, token, t, "n-42", "GET", "", timeline])))

        // POST with a body: its SHA256 is signed.
        let body = #"{"type":"rtsp"}"#
        let postSTS = TuyaSign.stringToSign(
            method: "POST", body: Data(body.utf8), url: "/v1.0/devices/d1/stream/actions/allocate")
        let postSign = TuyaSign.sign(clientID: cid, secret: secret, accessToken: token, t: t, stringToSign: postSTS)
        #expect(
            postSign
                == (try python([cid, secret, token, t, "", "POST", body, "/v1.0/devices/d1/stream/actions/allocate"])))
        #expect(postSign != tlSign && postSign != getSign)
    }

    @Test func aesECBAndCRCMatchOpenSSLAndZlib() throws {
        let key = Data("0123456789abcdef".utf8)
        let json = Data(#"{"dps":{"115":"1763800000"}}"#.utf8)
        let mine = try TuyaCipher(key: key).encrypt(json)
        let dir = TestEnvironment.tempDir("tuya-aes")
        defer { TestEnvironment.cleanup(dir) }
        try json.write(to: URL(fileURLWithPath: dir + "/p"))
        let r = try runProcess(
            "/bin/sh",
            [
                "-c",
                "openssl enc -aes-128-ecb -K 30313233343536373839616263646566 -in \(dir)/p | od -An -tx1 | tr -d ' \\n'",
            ])
        #expect(mine.map { String(format: "%02x", $0) }.joined() == r.stdout, "openssl: \(r.stdout) \(r.stderr)")
        #expect(try TuyaCipher(key: key).decrypt(mine) == json)
        #expect(throws: TuyaCipher.Failure.self) { try TuyaCipher(key: Data("fedcba9876543210".utf8)).decrypt(mine) }
        let z = try runProcess(
            "/usr/bin/python3", ["-c", "import zlib,sys; print(zlib.crc32(sys.argv[1].encode()))", "tuya frame"])
        #expect(
            String(TuyaLAN.crc32(Data("tuya frame".utf8))) == z.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test func framesRoundTripAndBadOnesAreRejectedWithAWayToResync() throws {
        let key = Data("0123456789abcdef".utf8)
        for version in [TuyaLAN.Version.v33, .v34] {
            let payload = try TuyaLAN.seal(Data(#"{"dps":{"115":"1"}}"#.utf8), command: 8, version: version, key: key)
            let frame = TuyaLAN.Frame(seq: 7, command: 8, retcode: 0, payload: payload)
            let bytes = TuyaLAN.encode(frame, version: version, integrityKey: key)
            let decoded = try #require(try TuyaLAN.decode(bytes, version: version, integrityKey: key, fromDevice: true))
            #expect(decoded.frame == frame && decoded.consumed == bytes.count)
            #expect(
                try TuyaLAN.open(decoded.frame.payload, version: version, key: key)
                    == Data(#"{"dps":{"115":"1"}}"#.utf8))

            // Truncated: wait for more.
            #expect(
                try TuyaLAN.decode(bytes.prefix(bytes.count - 1), version: version, integrityKey: key, fromDevice: true)
                    == nil)
            // A flipped bit: CRC or HMAC mismatch, skip the whole frame.
            var bad = bytes
            bad[22] ^= 0x01
            do {
                _ = try TuyaLAN.decode(bad, version: version, integrityKey: key, fromDevice: true)
                Issue.record("accepted a damaged frame")
            } catch let e as TuyaLAN.FrameError {
                #expect(e.kind == (version == .v33 ? .badCRC : .badHMAC) && e.skip == bytes.count)
            }
            // An absurd length: rejected before waiting for 4 GB.
            var huge = bytes
            huge.replaceSubrange(12..<16, with: [0x7F, 0xFF, 0xFF, 0xFF])
            do {
                _ = try TuyaLAN.decode(huge, version: version, integrityKey: key, fromDevice: true)
                Issue.record("accepted an oversized frame")
            } catch let e as TuyaLAN.FrameError {
                #expect(e.kind == .oversized)
            }
            // Garbage before a good frame: skipped up to the next prefix.
            let noisy = Data([1, 2, 3, 0, 0]) + bytes
            do {
                _ = try TuyaLAN.decode(noisy, version: version, integrityKey: key, fromDevice: true)
                Issue.record("accepted garbage")
            } catch let e as TuyaLAN.FrameError {
                #expect(e.kind == .badPrefix && e.skip == 5)
                #expect(
                    try TuyaLAN.decode(noisy.dropFirst(e.skip), version: version, integrityKey: key, fromDevice: true)?
                        .frame == frame)
            }
        }
    }

    @Test func sessionKeyExchangeAgreesAndAWrongKeyIsClear() throws {
        let key = Data("0123456789abcdef".utf8)
        let local = Data((0..<16).map { UInt8($0) })
        let remote = Data((100..<116).map { UInt8($0) })
        let start = try TuyaSession.start(localNonce: local, localKey: key)
        #expect(try TuyaCipher(key: key).decrypt(start) == local)
        let response = try TuyaSession.respond(remoteNonce: remote, localNonce: local, localKey: key)
        let (seen, finish) = try TuyaSession.finish(response: response, localNonce: local, localKey: key)
        #expect(seen == remote && !finish.isEmpty)
        let client = try TuyaSession.key(localNonce: local, remoteNonce: seen, localKey: key)
        let device = try TuyaSession.key(localNonce: local, remoteNonce: remote, localKey: key)
        #expect(client == device && client.count == 16 && client != key)
        // The device knows another key: its answer does not decrypt or does not authenticate.
        let other = try TuyaSession.respond(
            remoteNonce: remote, localNonce: local, localKey: Data("fedcba9876543210".utf8))
        #expect(throws: TuyaCipher.Failure.self) {
            try TuyaSession.finish(response: other, localNonce: local, localKey: key)
        }
    }
}
