import Foundation

/// A thread of its own that can be told to stop: the recorder's loops, a camera's session,
/// its sub-stream reader, the upkeep thread and the plugins' event listeners all run on one.
///
/// `stop()` sets the stop token first, wakes the thread from any `wait`, and joins it (returns
/// once the body has ended), so nothing the body does can come after `stop()` returns. A
/// worker stopped before it started never starts.
public final class Worker: @unchecked Sendable {
    // @unchecked Sendable: `stopping`, `started` and `ended` are guarded by `condition`; the
    // rest is immutable.
    public let name: String
    private let stackSize: Int
    private let condition = NSCondition()
    private var stopping = false
    private var started = false
    private var ended = false

    public init(name: String, stackSize: Int = 0) {
        self.name = name
        self.stackSize = stackSize
    }

    /// Starts the thread running `body` (once; not after `stop`).
    public func start(_ body: @escaping @Sendable () -> Void) {
        condition.lock()
        defer { condition.unlock() }
        guard !started, !stopping else { return }
        started = true
        let t = Thread { [self] in
            body()
            condition.lock()
            ended = true
            condition.broadcast()
            condition.unlock()
        }
        t.name = name
        if stackSize > 0 { t.stackSize = stackSize }
        t.start()
    }

    /// Asks the thread to end, wakes it, runs `interrupt` (to end a blocking read the body may
    /// be in), and waits until the thread has ended. From any thread but its own.
    public func stop(interrupt: () -> Void = {}) {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
        interrupt()
        condition.lock()
        while started && !ended { condition.wait() }
        condition.unlock()
    }

    /// Whether `stop` was called.
    public var isStopping: Bool { locked { stopping } }

    /// Waits up to `seconds`, returning early on `stop` or once `until` holds (it is checked
    /// under the worker's lock whenever `locked` changed something). Returns false if stopping.
    @discardableResult
    public func wait(seconds: Double, until: () -> Bool = { false }) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if seconds.isInfinite {
            while !stopping && !until() { condition.wait() }
        } else {
            let deadline = Date(timeIntervalSinceNow: seconds)
            while !stopping && !until() && condition.wait(until: deadline) {}
        }
        return !stopping
    }

    /// Runs `body` under the worker's lock and wakes its `wait`: for state the waiting thread
    /// must notice (`until`), and for reading that state from other threads.
    public func locked<T>(_ body: () throws -> T) rethrows -> T {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        return try body()
    }
}
