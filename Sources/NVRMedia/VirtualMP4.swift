import Glibc

/// One ordinary (non-fragmented) MP4 made of an in-memory header and byte ranges of segment
/// files: nothing is re-muxed and no video is read until its bytes are sent.
public struct VirtualMP4: Sendable {
    public enum Part: Sendable, Equatable {
        case bytes([UInt8])
        case file(path: String, offset: Int64, length: Int64)
        public var length: Int64 {
            switch self {
            case .bytes(let b): return Int64(b.count)
            case .file(_, _, let n): return n
            }
        }
    }
    public var parts: [Part]
    public var size: Int64 { parts.reduce(0) { $0 + $1.length } }
    /// Playable duration (90 kHz) after the edit list.
    public var duration90k: Int64
    public var videoSamples: Int

    /// Writes the whole file, calling `progress(written, total)` now and then.
    public func write(to path: String, progress: (Int64, Int64) -> Void = { _, _ in }) throws {
        let out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard out >= 0 else { throw MediaError.posix(.write, "cannot create \(path)", errno) }
        defer { close(out) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var written: Int64 = 0
        let total = size
        func put(_ p: UnsafeRawBufferPointer) throws {
            try FileRange.write(out, p, path: path)
            written += Int64(p.count)
            progress(written, total)
        }
        for part in parts {
            switch part {
            case .bytes(let b):
                try b.withUnsafeBytes { try put($0) }
            case .file(let src, let offset, let length):
                let fd = open(src, O_RDONLY | O_CLOEXEC)
                guard fd >= 0 else { throw MediaError.posix(.read, "cannot open \(src)", errno) }
                defer { close(fd) }
                var done: Int64 = 0
                while done < length {
                    let want = Int(min(Int64(buffer.count), length - done))
                    let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, want, off_t(offset + done)) }
                    guard n > 0 else { throw MediaError(.corrupt, "\(src) is shorter than the index says") }
                    try buffer.withUnsafeBytes { try put(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
                    done += Int64(n)
                }
            }
        }
    }
}
