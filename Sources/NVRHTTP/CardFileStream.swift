import Foundation
import NIOCore
import NVRPluginHost
import Synchronization

/// A card file read by its plugin on a thread of its own (the plugin's read blocks and pushes
/// chunks), handed to an async reader a chunk at a time. The plugin's thread waits while
/// `window` chunks are unread, so a slow client slows the card read instead of filling memory;
/// `cancel` (a client gone) ends the read at its next chunk.
final class CardFileStream: @unchecked Sendable {
    // @unchecked Sendable: `iterator` is used by one reader at a time (the answer's body).
    private var iterator: AsyncThrowingStream<ByteBuffer, any Error>.Iterator
    private let credits: DispatchSemaphore
    private let cancelled = Atomic<Bool>(false)

    init(plugin: PluginInstance, file: String, window: Int = 4) {
        let (stream, continuation) = AsyncThrowingStream<ByteBuffer, any Error>.makeStream()
        iterator = stream.makeAsyncIterator()
        let credits = DispatchSemaphore(value: window)
        self.credits = credits
        Thread.detachNewThread { [self] in
            do {
                _ = try plugin.cardRead(id: file, offset: 0, length: -1) { chunk in
                    credits.wait()
                    if self.cancelled.load(ordering: .acquiring) { return false }
                    continuation.yield(ByteBuffer(bytes: chunk))
                    return true
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
    }

    /// The next chunk; nil at the end of the file.
    func next() async throws -> ByteBuffer? {
        let chunk = try await iterator.next()
        credits.signal()
        return chunk
    }

    /// Ends the read: the plugin's thread returns at its next chunk.
    func cancel() {
        cancelled.store(true, ordering: .releasing)
        credits.signal()
    }
}
