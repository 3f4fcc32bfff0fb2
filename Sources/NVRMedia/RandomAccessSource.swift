import CFFmpeg
import Foundation

/// Bytes of one file that can be read at any offset: a camera's card file over HTTP Range,
/// where libavformat must only fetch what it needs (the moov, then the samples wanted).
public protocol RandomAccessSource: AnyObject {
    var size: Int64 { get }
    /// Reads up to `buffer.count` bytes at `offset`; 0 at the end of the file.
    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}
