import Synchronization

/// The server's open connections by client address (for the per-address cap) and what the
/// connection guards did, for /metrics. Shared by every connection; each operation is one
/// short lock or an atomic.
package final class ConnectionRegistry: Sendable {
    let limits: ConnectionLimits
    private let byAddress = Mutex<[String: Int]>([:])
    let open = Atomic<Int>(0)
    let idleCloses = Atomic<Int>(0)
    /// Connections answered with an error and closed by their guard, by status: malformed
    /// requests (400, 414, 431, 501), headers too slow (408), over the cap (503).
    package let refused = Mutex<[Int: Int]>([:])

    package init(limits: ConnectionLimits) {
        self.limits = limits
    }

    /// Counts a new connection from `address`; false (and nothing counted) when that address
    /// already has `maxConnectionsPerAddress` open.
    func admit(_ address: String) -> Bool {
        let admitted = byAddress.withLock { counts in
            let n = counts[address, default: 0]
            guard n < limits.maxConnectionsPerAddress else { return false }
            counts[address] = n + 1
            return true
        }
        if admitted { open.add(1, ordering: .relaxed) }
        return admitted
    }

    /// An admitted connection closed.
    func release(_ address: String) {
        byAddress.withLock { counts in
            let n = counts[address, default: 1] - 1
            counts[address] = n > 0 ? n : nil
        }
        open.subtract(1, ordering: .relaxed)
    }

    func openConnections(from address: String) -> Int {
        byAddress.withLock { $0[address, default: 0] }
    }

    func refused(status: Int) {
        refused.withLock { $0[status, default: 0] += 1 }
    }
}
