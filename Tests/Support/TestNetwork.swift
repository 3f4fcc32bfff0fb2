import Foundation

/// A network of a test's own: two network namespaces (a camera side and an NVR side) joined
/// by a veth pair on 10.211.N.0/24, so multicast (WS-Discovery) and other LAN traffic stays
/// inside hosts the test made. Needs root (CI runs as root). Removed on deinit.
public final class TestNetwork: @unchecked Sendable {
    // @unchecked Sendable: immutable after init.
    public let camera: String
    public let nvr: String
    public let cameraAddress: String
    public let nvrAddress: String
    /// The veth ends' names inside `camera` and `nvr` (for more addresses: ip addr add … dev).
    public let cameraLink: String
    public let nvrLink: String

    public init() throws {
        let tag = "\(getpid() % 10_000)\(Int.random(in: 10..<100))"
        camera = "nvrt\(tag)c"
        nvr = "nvrt\(tag)n"
        let subnet = Int.random(in: 1...250)
        cameraAddress = "10.211.\(subnet).2"
        nvrAddress = "10.211.\(subnet).1"
        let vc = "vt\(tag)c"
        let vn = "vt\(tag)n"
        cameraLink = vc
        nvrLink = vn
        let steps: [[String]] = [
            ["netns", "add", camera], ["netns", "add", nvr],
            ["link", "add", vc, "type", "veth", "peer", "name", vn],
            ["link", "set", vc, "netns", camera], ["link", "set", vn, "netns", nvr],
            ["-n", camera, "addr", "add", "\(cameraAddress)/24", "dev", vc],
            ["-n", nvr, "addr", "add", "\(nvrAddress)/24", "dev", vn],
            ["-n", camera, "link", "set", vc, "up"], ["-n", nvr, "link", "set", vn, "up"],
            ["-n", camera, "link", "set", "lo", "up"], ["-n", nvr, "link", "set", "lo", "up"],
        ]
        for s in steps {
            let r = try runProcess("/usr/sbin/ip", s)
            guard r.status == 0 else {
                remove()
                throw FixtureError("ip \(s.joined(separator: " ")): \(r.stderr) (network namespaces need root)")
            }
        }
    }

    deinit { remove() }

    private func remove() {
        for ns in [camera, nvr] { _ = try? runProcess("/usr/sbin/ip", ["netns", "del", ns]) }
    }

    /// Runs a program inside namespace `ns` and waits for it.
    public func run(in ns: String, _ executable: String, _ args: [String]) throws -> ProcessResult {
        try runProcess("/usr/sbin/ip", ["netns", "exec", ns, executable] + args)
    }

    /// A process that runs `executable` inside `ns` (not started).
    public func process(in ns: String, _ executable: String, _ args: [String]) -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
        p.arguments = ["netns", "exec", ns, executable] + args
        return p
    }
}
