import Foundation

/// A TCP proxy on loopback (Tests/Support/tcp_proxy.py) in front of a server, which a test cuts
/// like a network (`cut()`: a blackhole, connections neither forwarded nor refused) and mends.
public final class TCPProxyFixture: @unchecked Sendable {
    public let port: Int
    private let process: Process

    public init(target: String) throws {
        let (p, line) = try PythonFixture.start([
            TestEnvironment.repoRoot + "/Tests/Support/tcp_proxy.py", "--target", target,
        ])
        guard let port = PythonFixture.readyPort(line) else {
            PythonFixture.stop(p)
            throw FixtureError("tcp_proxy.py did not start: \(line)")
        }
        process = p
        self.port = port
    }

    deinit { PythonFixture.stop(process) }

    public func cut() { kill(process.processIdentifier, SIGUSR1) }
    public func mend() { kill(process.processIdentifier, SIGUSR2) }
}
