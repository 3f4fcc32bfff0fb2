import Foundation
import NVRCameras
import NVRIndex
import TestSupport
import Testing

/// A camera's secrets are write-only: forms get "***" and `***@`, and what they send back keeps
/// the stored ones — but only towards the address they were set for.
@Suite struct CameraSecretsTests {
    let h: RecorderHarness
    let admin: CameraAdmin

    init() throws {
        h = try RecorderHarness()
        admin = CameraAdmin(index: h.index, storage: h.recorder.storage, plugins: h.recorder.plugins)
        try admin.add(
            name: "porch", plugin: "rtsp",
            config: ["url": "rtsp://admin:hunter2@127.0.0.1:9/stream", "password": "s3cret", "user": "admin"])
    }

    func stored() throws -> [String: String] { CameraAdmin.dictionary(try h.camera("porch").config) }

    @Test func theURLShownWithStarsKeepsItsUserAndPasswordAtTheSameAddress() throws {
        try admin.update(name: "porch", .init(url: "rtsp://***@127.0.0.1:9/other"))
        #expect(try stored()["url"] == "rtsp://admin:hunter2@127.0.0.1:9/other")
        // Another address: refused, nothing changed.
        #expect(throws: CameraAdmin.Failure.self) {
            try admin.update(name: "porch", .init(url: "rtsp://***@203.0.113.9:554/stream"))
        }
        #expect(try stored()["url"] == "rtsp://admin:hunter2@127.0.0.1:9/other")
    }

    @Test func aURLThatOnlyLooksLikeTheSameAddressGetsNoSecret() throws {
        for url in [
            "rtsp://***@203.0.113.9#@127.0.0.1:9/stream",  // FFmpeg and URLComponents see 203.0.113.9
            "rtsps://***@127.0.0.1:9/stream",  // another scheme
            "rtsp://***@127.0.0.1/stream",  // another port (554)
            "rtsp://***@127.0.0.1:9@203.0.113.9/stream",
        ] {
            #expect(throws: CameraAdmin.Failure.self, "\(url)") {
                try admin.update(name: "porch", .init(url: url))
            }
        }
        #expect(try stored()["url"] == "rtsp://admin:hunter2@127.0.0.1:9/stream")
    }

    @Test func aNewAddressMustBringTheSecretsWithIt() throws {
        // The stored password option would go to the new host: refused until it is typed again.
        #expect {
            try admin.update(name: "porch", .init(url: "rtsp://203.0.113.9/stream"))
        } throws: { "\($0)".contains("type 'password' again") }
        #expect {
            try admin.update(name: "porch", .init(options: ["substream_url": "rtsp://203.0.113.9/sub"]))
        } throws: { "\($0)".contains("'password'") }
        #expect(try stored()["url"] == "rtsp://admin:hunter2@127.0.0.1:9/stream")
        try admin.update(name: "porch", .init(url: "rtsp://u:p@203.0.113.9/stream", options: ["password": "new"]))
        #expect(try stored()["password"] == "new" && stored()["url"] == "rtsp://u:p@203.0.113.9/stream")
        // Changes that leave the address alone keep the secrets.
        try admin.update(name: "porch", .init(options: ["transport": "tcp", "password": "***"], enabled: false))
        #expect(try stored()["password"] == "new")
    }

    @Test func aProbeUsesStoredSecretsOnlyTowardsTheCamerasAddress() throws {
        // Towards another address, "***" is not filled in: the probe is refused before any connection.
        #expect {
            try admin.probe(
                plugin: "rtsp", config: ["url": "rtsp://127.0.0.1:10/x", "password": "***"], camera: "porch",
                timeout: 1)
        } throws: { "\($0)".contains("type 'password' again") }
        #expect {
            try admin.probe(plugin: "demo", config: [:], camera: "porch", timeout: 1)
        } throws: { "\($0)".contains("not demo") }
        // Towards its own address the secrets are used: the probe gets as far as connecting (nothing listens on port 9).
        #expect {
            try admin.probe(
                plugin: "rtsp", config: ["url": "rtsp://***@127.0.0.1:9/stream", "password": "***"], camera: "porch",
                timeout: 1)
        } throws: { !"\($0)".contains("again") && !($0 is CameraAdmin.Failure) }
    }
}
