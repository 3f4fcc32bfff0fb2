import Foundation
import NVRIndex
import TestSupport
import Testing

/// Stopping the recorder while cameras are being added (from the API, or `nvr camera add` in
/// another process): once `stop` returns, no camera records, and none starts later.
@Suite struct RecorderShutdownTests {
    @Test func noCameraStartsDuringOrAfterStop() throws {
        for round in 0..<10 {
            let h = try RecorderHarness()
            h.recorder.changePollSeconds = 0.005
            try h.recorder.start(addDemoIfEmpty: false)
            // Cameras that are refused at once (nothing listens on port 1): cheap sessions.
            nonisolated(unsafe) let harness = h
            let adding = Thread {
                for i in 0..<40 {
                    try? harness.add("c\(i)", ["url": "rtsp://127.0.0.1:1/stream"])
                    Thread.sleep(forTimeInterval: 0.002)
                }
            }
            adding.start()
            Thread.sleep(forTimeInterval: 0.03)
            h.recorder.stop()
            #expect(h.recorder.allSessions.isEmpty, "round \(round): a camera started while the recorder stopped")
            Thread.sleep(forTimeInterval: 0.05)  // the watcher's next look, if it still ran
            #expect(h.recorder.allSessions.isEmpty, "round \(round): a camera started after the recorder stopped")
            while !adding.isFinished { Thread.sleep(forTimeInterval: 0.01) }
        }
    }
}
