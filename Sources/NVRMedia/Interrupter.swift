import CFFmpeg
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Lets another thread abort a blocking libav call, and bounds how long any one call may
/// block, so stopping a camera never hangs on a dead socket.
public final class Interrupter: Sendable {
    private let stopped = Atomic<Bool>(false)
    /// Monotonic nanoseconds after which the current call is aborted; 0 = no deadline.
    private let deadline = Atomic<UInt64>(0)
    private let timedOut = Atomic<Bool>(false)

    /// Set when the current call was refused for a reason of the host's (a push with the
    /// wrong stream key); cleared by forgetRefusal() before the next open (not by arm(),
    /// which runs for every packet read).
    private let refusal = Mutex<String?>(nil)

    public init() {}

    /// Aborts the current call now and remembers why (the error then says so).
    public func refuse(_ why: String) {
        refusal.withLock { $0 = why }
        deadline.store(1, ordering: .relaxed)
    }
    public var refused: String? { refusal.withLock { $0 } }
    public func forgetRefusal() { refusal.withLock { $0 = nil } }

    public func stop() { stopped.store(true, ordering: .relaxed) }
    public var isStopped: Bool { stopped.load(ordering: .relaxed) }

    /// Arms a deadline `seconds` from now for the next blocking call.
    public func arm(seconds: Double) {
        timedOut.store(false, ordering: .relaxed)
        deadline.store(Self.now() + UInt64(seconds * 1e9), ordering: .relaxed)
    }
    public func disarm() { deadline.store(0, ordering: .relaxed) }
    /// True if the last call was aborted by its deadline rather than by stop().
    public var didTimeOut: Bool { timedOut.load(ordering: .relaxed) }

    func shouldInterrupt() -> Bool {
        if stopped.load(ordering: .relaxed) { return true }
        let d = deadline.load(ordering: .relaxed)
        if d != 0 && Self.now() > d {
            timedOut.store(true, ordering: .relaxed)
            return true
        }
        return false
    }

    /// libav polls the callback around every network read, so this uses the coarse clock
    /// (a few ms resolution, no syscall): deadlines are seconds long.
    public static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// The C callback libav polls; `opaque` is an unretained Interrupter.
    static let callback: @convention(c) (UnsafeMutableRawPointer?) -> Int32 = { opaque in
        guard let opaque else { return 0 }
        return Unmanaged<Interrupter>.fromOpaque(opaque).takeUnretainedValue().shouldInterrupt() ? 1 : 0
    }
}
