import CamSim
import Foundation
import Logging
import TuyaAPI

/// Camera simulators for trying the NVR by hand:
///   swift run camsim gopro [--port 8080] [--address 127.0.0.1] [--card DIR] [--no-record] [--clock-offset SECONDS]
/// then add it:  nvr camera add gp --plugin gopro --option base_url=http://127.0.0.1:8080
/// Switches while it runs: curl 'http://127.0.0.1:8080/sim/wifi?up=0' (and up=1), /sim/stall?seconds=5,
/// /sim/busy?seconds=5, /sim/stats.
///
///   swift run camsim insta360 [--port 8081] [--address 127.0.0.1] [--card DIR] [--zone +08:00] [--videos N] [--push rtmp://127.0.0.1:1935/live/KEY]
/// then:  nvr camera add x3 --plugin insta360 --option base_url=http://127.0.0.1:8081 --option stream_key=KEY
/// --videos N puts N one-minute 360 videos of the last hours on the card; --push also pushes
/// live video to the NVR's RTMP listener like the camera's app. Switches: /sim/battery?level=0.4, /sim/stats.
///
///   swift run camsim tuya [--port 8083] [--lan-port 6668] [--version 3.3|3.4] [--rtsp rtsp://127.0.0.1:8554/stream] [--motion-seconds 5]
///                         [--announce BROADCAST_ADDRESS --announce-ip DEVICE_ADDRESS]
/// the cloud OpenAPI (signatures checked; client_id 4ghy8xkqw2n7vj3m5dpa, secret c7a9f1e35b2d48d6a0e4f9b1c3d5e7f9,
/// device bf12ab34cd56ef78gh90ij, local key a1b2c3d4e5f6g7h8), single-use allocations in front of --rtsp, a LAN
/// device pushing motion, and an hour of cloud recordings from two hours ago. It prints the `nvr camera add` line.
let args = Array(CommandLine.arguments.dropFirst())
let usage = """
    usage: camsim gopro [--port N] [--address IP] [--card DIR] [--no-record] [--clock-offset S] [--chapter-seconds S]
           camsim insta360 [--port N] [--address IP] [--card DIR] [--zone +HH:MM] [--videos N] [--push RTMP_URL]
           camsim tuya [--port N] [--lan-port N] [--version 3.3|3.4] [--rtsp RTSP_URL] [--motion-seconds S] [--announce BCAST --announce-ip IP]

    """
func value(_ flag: String) -> String? { args.firstIndex(of: flag).flatMap { $0 + 1 < args.count ? args[$0 + 1] : nil } }
func card(_ name: String) -> String {
    value("--card") ?? FileManager.default.temporaryDirectory.appendingPathComponent(name).path
}
LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }

/// Ctrl-C or kill: stop children (encoder, pusher) too, then exit at once (the HTTP server
/// needs no goodbye; waiting for its graceful shutdown from here never returned).
func onStop(_ action: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
    [SIGINT, SIGTERM].map { sig -> any DispatchSourceSignal in
        signal(sig, SIG_IGN)
        let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
        s.setEventHandler {
            action()
            exit(0)
        }
        s.resume()
        return s
    }
}

switch args.first {
case "gopro":
    var options = GoProSimulator.Options(cardRoot: card("camsim-gopro-card"))
    options.httpPort = value("--port").flatMap(Int.init) ?? 8080
    if let a = value("--address") { options.httpAddress = a }
    options.recordToCard = !args.contains("--no-record")
    if let s = value("--clock-offset").flatMap(Double.init) { options.clockOffset = s }
    if let s = value("--chapter-seconds").flatMap(Int.init) { options.chapterSeconds = s }
    let sim = try GoProSimulator(options)
    let stops = onStop { sim.stopEncoder() }
    try await sim.run()
    _ = stops
case "insta360":
    var options = Insta360Simulator.Options(cardRoot: card("camsim-insta360-card"))
    options.httpPort = value("--port").flatMap(Int.init) ?? 8081
    if let a = value("--address") { options.httpAddress = a }
    if let z = value("--zone") {
        let sign = z.hasPrefix("-") ? -1 : 1
        let parts = z.dropFirst().split(separator: ":").compactMap { Int($0) }
        guard parts.count == 2 else {
            FileHandle.standardError.write(Data(usage.utf8))
            exit(2)
        }
        options.zoneSeconds = sign * (parts[0] * 3600 + parts[1] * 60)
    }
    let sim = try Insta360Simulator(options)
    for i in 0..<(value("--videos").flatMap(Int.init) ?? 0) {
        try sim.addVideo(end: Date(timeIntervalSinceNow: -Double(i) * 1800), seconds: 60)
    }
    let pusher = value("--push").map { RTMPPusher(url: $0) }
    pusher?.start()
    let stops = onStop { pusher?.stop() }
    try await sim.run()
    _ = stops
case "tuya":
    var options = TuyaCloudSimulator.Options()
    options.httpPort = value("--port").flatMap(Int.init) ?? 8083
    let cloud = TuyaCloudSimulator(options)
    let device = options.devices.first!
    let version: TuyaLAN.Version = value("--version") == "3.4" ? .v34 : .v33
    let lan = try TuyaDeviceSimulator(
        deviceID: device, localKey: "a1b2c3d4e5f6g7h8", version: version,
        motionSeconds: value("--motion-seconds").flatMap(Double.init) ?? 5,
        port: value("--lan-port").flatMap(Int.init) ?? 6668)
    if let broadcast = value("--announce") {
        try lan.announce(ip: value("--announce-ip") ?? "127.0.0.1", broadcast: broadcast)
    }
    let gate = try value("--rtsp").map { try SingleUseRTSPGate(upstream: $0) }
    if let gate { cloud.setAllocator { _ in gate.issue() } }
    let now = Int64(Date().timeIntervalSince1970)
    cloud.addCloudRecording(deviceID: device, start: now - 7200, stop: now - 3600)
    FileHandle.standardOutput.write(
        Data(
            """
            nvr camera add tu --plugin tuya --option device_id=\(device) --option cloud_host=http://127.0.0.1:\(options.httpPort) \\
                --option client_id=\(options.clientID) --option secret=\(options.secret) \\
                --option lan_host=127.0.0.1 --option lan_port=\(lan.port) --option local_key=\(lan.localKey) --option lan_version=\(version.rawValue)

            """.utf8))
    let stops = onStop {
        lan.stop()
        gate?.stop()
    }
    try await cloud.run()
    _ = stops
default:
    FileHandle.standardError.write(Data(usage.utf8))
    exit(2)
}
