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
