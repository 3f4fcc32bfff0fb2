import CamSim
import Foundation
import Logging

/// Camera simulators for trying the NVR by hand:
///   swift run camsim gopro [--port 8080] [--card DIR] [--no-record] [--clock-offset SECONDS]
/// then add it:  nvr camera add gp --plugin gopro --option base_url=http://127.0.0.1:8080
/// Switches while it runs: curl 'http://127.0.0.1:8080/sim/wifi?up=0' (and up=1), /sim/stall?seconds=5,
/// /sim/busy?seconds=5, /sim/stats.
let args = Array(CommandLine.arguments.dropFirst())
guard args.first == "gopro" else {
    FileHandle.standardError.write(Data("usage: camsim gopro [--port N] [--card DIR] [--no-record] [--clock-offset S] [--chapter-seconds S]\n".utf8))
    exit(2)
}
func value(_ flag: String) -> String? { args.firstIndex(of: flag).flatMap { $0 + 1 < args.count ? args[$0 + 1] : nil } }
var options = GoProSimulator.Options(cardRoot: value("--card") ?? FileManager.default.temporaryDirectory.appendingPathComponent("camsim-gopro-card").path)
options.httpPort = value("--port").flatMap(Int.init) ?? 8080
options.recordToCard = !args.contains("--no-record")
if let s = value("--clock-offset").flatMap(Double.init) { options.clockOffset = s }
if let s = value("--chapter-seconds").flatMap(Int.init) { options.chapterSeconds = s }
LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
let sim = try GoProSimulator(options)
// Ctrl-C or kill: stop the encoder child too.
let stops = [SIGINT, SIGTERM].map { sig -> any DispatchSourceSignal in
    signal(sig, SIG_IGN)
    let s = DispatchSource.makeSignalSource(signal: sig)
    s.setEventHandler { Task { await sim.shutdown(); exit(0) } }
    s.resume()
    return s
}
try await sim.run()
