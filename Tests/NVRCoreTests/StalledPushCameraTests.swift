import Foundation
import TestSupport
import Testing

/// A push-mode camera (the demo plugin, in-process) whose timestamps start jumping back and
/// forth: its frames keep arriving on the plugin's thread, almost none can be recorded, and
/// the camera says `stalled`, with why, within 10 s; a good one beside it stays `streaming`.
@Suite struct StalledPushCameraTests {
    @Test func aPushCameraWhoseTimestampsJumpSaysStalled() throws {
        let h = try RecorderHarness(segmentSeconds: 2)
        try h.add("jumpy", plugin: "demo", ["jump_after": "2", "gop_seconds": "1"])
        try h.add("steady", plugin: "demo", ["gop_seconds": "1"])
        try h.recorder.start(addDemoIfEmpty: false)
        defer { h.recorder.stop() }
        #expect(TestEnvironment.wait(timeout: 10) { h.recorder.session(named: "jumpy")?.status.state == .streaming })
        let jumps = Date().addingTimeInterval(2)
        #expect(
            TestEnvironment.wait(timeout: 15) { h.recorder.session(named: "jumpy")?.status.state == .stalled },
            "\(String(describing: h.recorder.session(named: "jumpy")?.status))")
        #expect(Date().timeIntervalSince(jumps) < 10)
        let status = try #require(h.recorder.session(named: "jumpy")?.status)
        #expect(status.reason?.contains("timestamps jump") == true, "\(status.reason ?? "")")
        #expect(h.recorder.session(named: "steady")?.status.state == .streaming)
    }
}
