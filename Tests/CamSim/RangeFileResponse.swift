import Foundation
import Hummingbird
import NIOCore

/// A camera's card file over HTTP, whole or one byte range (206), in 64 KB chunks: how GoPro
/// and OSC cameras serve their media. `served` is told each chunk's size.
func rangeFileResponse(
    _ path: String, range: String?, contentType: String = "video/mp4",
    served: @escaping @Sendable (Int) -> Void
) throws -> Response {
    guard let handle = FileHandle(forReadingAtPath: path) else { return Response(status: .notFound) }
    let size = Int64((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int64) ?? 0)
    var lo: Int64 = 0
    var hi = size - 1
    var status = HTTPResponse.Status.ok
    if let range, range.hasPrefix("bytes="), !range.contains(",") {
        let spec = range.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
        if spec.count == 2 {
            if spec[0].isEmpty, let n = Int64(spec[1]) {
                lo = max(0, size - n)
            } else if let a = Int64(spec[0]) {
                lo = a
                if let b = Int64(spec[1]) { hi = min(b, size - 1) }
            }
        }
        guard lo < size, lo <= hi else {
            try? handle.close()
            return Response(status: .rangeNotSatisfiable, headers: [.contentRange: "bytes */\(size)"])
        }
        status = .partialContent
    }
    var headers: HTTPFields = [.contentType: contentType, .acceptRanges: "bytes"]
    if status == .partialContent { headers[.contentRange] = "bytes \(lo)-\(hi)/\(size)" }
    let count = hi - lo + 1
    let start = lo
    return Response(
        status: status, headers: headers,
        body: ResponseBody(contentLength: Int(count)) { writer in
            defer { try? handle.close() }
            try handle.seek(toOffset: UInt64(start))
            var left = count
            while left > 0 {
                let chunk = handle.readData(ofLength: Int(min(left, 64 << 10)))
                if chunk.isEmpty { break }
                try await writer.write(ByteBuffer(bytes: chunk))
                left -= Int64(chunk.count)
                served(chunk.count)
            }
            try await writer.finish(nil)
        })
}
