import Foundation
import Testing

@testable import NVRMedia

/// The native RTSP client over recorded camera conversations (the fuzzing seeds in
/// Tests/Fixtures/fuzz/rtsp-session: a GStreamer camera, and the hostile camera's modes): what
/// it makes of each, packet by packet, with no network.
struct RTSPReplayTests {
    static let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/fuzz/rtsp-session")

    struct Outcome {
        var client: RTSPClient
        var video = 0, keys = 0, audio = 0
        var end: String
    }

    func replay(_ name: String) throws -> Outcome {
        let bytes = Array(try Data(contentsOf: Self.dir.appendingPathComponent(name)).dropFirst())
        let client = try RTSPClient(replaying: bytes)
        var o = Outcome(client: client, end: "")
        var lastVideo: Int64?
        while true {
            do {
                try client.read { p in
                    if p.stream == 0 {
                        o.video += 1
                        if p.isKey { o.keys += 1 }
                        if let l = lastVideo { #expect(p.dts > l, "\(name): video times go forward") }
                        lastVideo = p.dts
                    } else {
                        o.audio += 1
                    }
                }
            } catch {
                o.end = "\(error)"
                return o
            }
        }
    }

    @Test func gstreamerCameraWithAudio() throws {
        let o = try replay("gstreamer-h264-aac")
        #expect(o.client.streams.map(\.codec) == [.h264, .aac])
        #expect(o.client.streams[0].width == 640 && o.client.streams[0].height == 360)
        #expect(o.video >= 5 && o.keys >= 1 && o.audio >= 5, "\(o.video) frames, \(o.keys) key, \(o.audio) audio")
        #expect(o.client.notes.isEmpty)
        #expect(o.end.contains("end of stream"))
    }

    @Test func gstreamerH265() throws {
        let o = try replay("gstreamer-h265")
        #expect(o.client.streams.map(\.codec) == [.h265])
        #expect(o.video >= 5 && o.keys >= 1)
    }

    @Test func clockRatesThatCannotBeRightAreTakenAs90kHz() throws {
        for name in ["hostile-clock-rate-zero"] {
            let o = try replay(name)
            #expect(o.client.streams[0].timebaseDen == 90_000)
            #expect(o.client.notes.contains { $0.contains("clock rate") }, "\(o.client.notes)")
            #expect(o.video >= 20, "\(name): \(o.video) frames")
        }
    }

    @Test func unusableParameterSetsInTheSDPGiveWayToTheStreamsOwn() throws {
        for name in ["hostile-sps-huge-width", "hostile-sps-poc-cycle", "hostile-bad-sprop"] {
            let o = try replay(name)
            #expect(o.client.streams[0].extradata.isEmpty, "\(name)")
            #expect(o.client.notes.contains { $0.contains("parameter sets") }, "\(name): \(o.client.notes)")
            #expect(o.video >= 20 && o.keys >= 1, "\(name): \(o.video) frames")
        }
    }

    @Test func audioItCannotReadIsSaidAndVideoRecorded() throws {
        let o = try replay("hostile-sizelength-negative")
        #expect(o.client.streams.map(\.codec) == [.h264])
        #expect(
            o.client.notes.contains { $0.contains("audio not recorded") && $0.contains("sizelength") },
            "\(o.client.notes)")
        #expect(o.video >= 20)
    }

    @Test func sessionTimeoutWithNothingAfterTheEqualsSign() throws {
        let o = try replay("hostile-session-timeout-empty")
        #expect(o.video >= 20)
    }

    @Test func malformedAnswersAreErrorsThatSayWhy() throws {
        func failure(_ name: String) -> String {
            let bytes = Array(((try? Data(contentsOf: Self.dir.appendingPathComponent(name))) ?? Data()).dropFirst())
            do {
                _ = try RTSPClient(replaying: bytes)
                return "opened"
            } catch { return "\(error)" }
        }
        #expect(failure("describe-negative-length").contains("Content-Length '-5'"))
        #expect(failure("describe-huge-length").contains("body of 99999999999 bytes"))
        #expect(failure("describe-status-huge").contains("not an RTSP answer"))
        let mid = try replay("midstream-negative-length")
        #expect(mid.video > 0 && mid.end.contains("Content-Length '-3'"), "\(mid.end)")
    }

    @Test func anAccessUnitThatNeverEndsIsDroppedNotBuffered() throws {
        let o = try replay("hostile-endless-au")
        #expect(o.video == 0)
        #expect(o.end.contains("end of stream"))
    }
}
