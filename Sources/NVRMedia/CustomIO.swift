import CFFmpeg
import Foundation

/// An AVIOContext over a RandomAccessSource. Keeps the position; libavformat calls in on the
/// demuxing thread only.
final class CustomIO {
    let source: any RandomAccessSource
    private(set) var context: UnsafeMutablePointer<AVIOContext>?
    var position: Int64 = 0
    /// The last read error, so the demuxer's failure can say what went wrong.
    var lastError: (any Error)?

    init(_ source: any RandomAccessSource) throws {
        self.source = source
        let size: Int32 = 256 << 10
        guard let buffer = av_malloc(Int(size)) else { throw MediaError(.open, "out of memory") }
        let opaque = Unmanaged.passUnretained(self).toOpaque()
        context = avio_alloc_context(
            buffer.assumingMemoryBound(to: UInt8.self), size, 0, opaque,
            { opaque, buf, size in
                let io = Unmanaged<CustomIO>.fromOpaque(opaque!).takeUnretainedValue()
                do {
                    let n = try io.source.read(
                        at: io.position, into: UnsafeMutableRawBufferPointer(start: buf, count: Int(size)))
                    if n == 0 { return nvr_averror_eof() }
                    io.position += Int64(n)
                    return Int32(n)
                } catch {
                    io.lastError = error
                    return nvr_averror(EIO)
                }
            }, nil,
            { opaque, offset, whence in
                let io = Unmanaged<CustomIO>.fromOpaque(opaque!).takeUnretainedValue()
                switch whence & ~AVSEEK_FORCE {
                case AVSEEK_SIZE: return io.source.size
                case SEEK_SET: io.position = offset
                case SEEK_CUR: io.position += offset
                case SEEK_END: io.position = io.source.size + offset
                default: return -1
                }
                return io.position
            })
        guard context != nil else {
            av_free(buffer)
            throw MediaError(.open, "out of memory")
        }
    }

    deinit {
        if context != nil {
            av_freep(&context!.pointee.buffer)
            avio_context_free(&context)
        }
    }
}
