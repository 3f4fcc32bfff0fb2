import Foundation
import NVRMedia
import NVRPluginHost
import NVRRecorder
import Testing

/// The rtsp plugin's documented `timeout` option reaches the native RTSP client (it used to
/// be honoured by libavformat only): a camera that accepts the connection and then says
/// nothing is given up on after that many seconds, not the default 10.
@Suite struct LiveInputsTests {
    /// A TCP port that accepts connections (the kernel's backlog) and never answers.
    static func silentListener() throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, len) == 0 && listen(fd, 8) == 0 && getsockname(fd, $0, &len) == 0
            }
        }
        guard bound else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        return (fd, Int(UInt16(bigEndian: addr.sin_port)))
    }

    @Test func theTimeoutOptionReachesTheNativeClient() throws {
        let (fd, port) = try Self.silentListener()
        defer { close(fd) }
        let source = LiveSource(
            url: "rtsp://127.0.0.1:\(port)/stream", options: ["rtsp_transport": "tcp", "timeout": "1000000"])
        let started = Date()
        #expect(throws: (any Error).self) { _ = try LiveInputs.open(source, interrupter: Interrupter()) }
        let took = Date().timeIntervalSince(started)
        // 1 s asked; the default would be 10 s.
        #expect(took >= 0.9 && took < 6, "gave up after \(took) s")
    }
}
