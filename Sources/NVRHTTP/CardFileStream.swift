import Foundation
import NIOCore
import NVRPluginHost

/// A card file read by its plugin on a thread of its own (the plugin's read blocks and pushes
/// chunks), handed to an async reader a chunk at a time.
///
/// The plugin's thread waits while `window` chunks are unread, so a slow client slows the card
/// read instead of filling memory. The read ends (the sink answers false, at once and to every
/// later call) when the stream is cancelled, when this object goes away unread (an answer
/// whose head could not be sent), or when no chunk is taken for `stallSeconds`; a read ended
/// so is an error to the reader, never a short file taken for a whole one. A camera that stops
/// answering mid-file is left to the plugin's own read timeout.
final class CardFileStream: @unchecked Sendable {
    // @unchecked Sendable: `iterator` is used by one reader at a time (the answer's body);
    // `flow` is shared with the plugin's thread under its own lock.
    private var iterator: AsyncThrowingStream<ByteBuffer, any Error>.Iterator
    private let flow: Flow

    /// What the plugin's thread and the reader share: chunks handed over and not yet taken,
    /// and whether the read is to stop.
    final class Flow: @unchecked Sendable {
        // @unchecked Sendable: both fields are guarded by `condition`.
        private let condition = NSCondition()
        private var unread = 0
        private var stopped = false
        let window: Int
        let stallSeconds: Double

        init(window: Int, stallSeconds: Double) {
            self.window = window
            self.stallSeconds = stallSeconds
        }

        /// On the plugin's thread: waits for room; false when the read is to stop. The stall is
        /// measured on the monotonic clock (a wall clock set by NTP does not end a download).
        func admit() -> Bool {
            condition.lock()
            defer { condition.unlock() }
            let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(stallSeconds * 1e9)
            while !stopped && unread >= window {
                let now = DispatchTime.now().uptimeNanoseconds
                if now >= deadline {
                    stopped = true
                    break
                }
                _ = condition.wait(until: Date(timeIntervalSinceNow: min(Double(deadline - now) / 1e9, 1)))
            }
            if stopped { return false }
            unread += 1
            return true
        }

        /// The reader took a chunk.
        func taken() {
            condition.lock()
            unread = max(0, unread - 1)
            condition.signal()
            condition.unlock()
        }

        func stop() {
            condition.lock()
            stopped = true
            condition.broadcast()
            condition.unlock()
        }
    }

    init(plugin: PluginInstance, file: String, window: Int = 4, stallSeconds: Double = 60) {
        let (stream, continuation) = AsyncThrowingStream<ByteBuffer, any Error>.makeStream()
        iterator = stream.makeAsyncIterator()
        let flow = Flow(window: window, stallSeconds: stallSeconds)
        self.flow = flow
        continuation.onTermination = { _ in flow.stop() }
        // The thread holds the flow and the continuation, never this object: dropping it stops
        // the read (deinit).
        Thread.detachNewThread {
            do {
                let whole = try plugin.cardRead(id: file, offset: 0, length: -1) { chunk in
                    guard flow.admit() else { return false }
                    continuation.yield(ByteBuffer(bytes: chunk))
                    return true
                }
                if whole {
                    continuation.finish()
                } else {
                    continuation.finish(throwing: PluginError("the card read was stopped before the end of \(file)"))
                }
            } catch {
                continuation.finish(throwing: error)
            }
        }
    }

    deinit { flow.stop() }

    /// The next chunk; nil at the end of the file.
    func next() async throws -> ByteBuffer? {
        let chunk = try await iterator.next()
        flow.taken()
        return chunk
    }

    /// Ends the read: the plugin's thread returns at its next chunk (or from its wait).
    func cancel() { flow.stop() }
}
