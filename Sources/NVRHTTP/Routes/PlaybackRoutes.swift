import Foundation
import HTTPTypes
import Hummingbird
import NVRIndex
import NVRMedia
import NVRPlayback
import NVRTime

/// A camera's recordings as MP4 and JPEG: view.mp4 of any range, snapshots, thumbnails.
struct PlaybackRoutes: IndexedRoutes {
    let index: any IndexStore
    let storage: StorageLayout
    let snapshots: Snapshots
    let views: ViewCache
    let maxViewSeconds: Int

    func register(on router: Router<NVRContext>) {
        router.get("/api/cameras/{name}/view.mp4") { r, c in try await view(r, try await camera(c)) }
        router.head("/api/cameras/{name}/view.mp4") { r, c in try await view(r, try await camera(c)) }
        router.get("/api/cameras/{name}/timelapse.mp4") { r, c in try await timelapse(r, try await camera(c)) }
        router.head("/api/cameras/{name}/timelapse.mp4") { r, c in try await timelapse(r, try await camera(c)) }
        router.get("/api/cameras/{name}/snapshot.jpg") { r, c in try await snapshot(r, try await camera(c)) }
        router.get("/api/cameras/{name}/thumbnails") { r, c in try await thumbnails(r, try await camera(c)) }
    }

    /// GET/HEAD /api/cameras/{name}/view.mp4?start=&end= — one ordinary MP4 of the range,
    /// built from the index; media bytes are streamed from the segment files as asked.
    func view(_ r: Request, _ cam: CameraRecord) async throws -> Response {
        let range = try Query(request: r).range()
        guard Time90k.length(range) <= Int64(maxViewSeconds) * 90_000 else {
            throw APIError(
                .badRequest, "range_too_long",
                "the range is \(Time90k.describeDuration(Time90k.length(range))); one view.mp4 covers at most \(Time90k.describeDuration(Int64(maxViewSeconds) * 90_000)) (http.max_view_seconds)"
            )
        }
        return try await mp4(r, cameraID: cam.id!, range: range)
    }

    /// GET/HEAD /api/cameras/{name}/timelapse.mp4?start=&end=&speed= — key frames only, `speed`
    /// times faster (Timelapse), for ranges up to `maxTimelapseDays`.
    func timelapse(_ r: Request, _ cam: CameraRecord) async throws -> Response {
        let query = Query(request: r)
        let range = try query.range()
        guard let speed = try query.int("speed", in: Timelapse.speeds) else {
            throw APIError.badRequest(
                "speed is required: how many times faster than real time (\(Timelapse.speeds.lowerBound)…\(Timelapse.speeds.upperBound))"
            )
        }
        guard Time90k.length(range) <= Int64(Self.maxTimelapseDays) * 86_400 * 90_000 else {
            throw APIError(
                .badRequest, "range_too_long",
                "the range is \(Time90k.describeDuration(Time90k.length(range))); a timelapse covers at most \(Self.maxTimelapseDays) days"
            )
        }
        return try await mp4(r, cameraID: cam.id!, range: range, speed: speed)
    }

    static let maxTimelapseDays = 31

    /// The MP4 of a camera's range as a response: headers, validators, Range, HEAD.
    func mp4(_ r: Request, cameraID: Int64, range: Range<Int64>, speed: Int? = nil) async throws -> Response {
        let view = try await offload { [index, storage, views] in
            try views.view(index: index, storage: storage, camera: cameraID, range: range, speed: speed)
        }
        let mp4 = view.result.mp4
        let size = mp4.size

        var headers: HTTPFields = [
            .contentType: "video/mp4", .acceptRanges: "bytes", .eTag: view.etag, .cacheControl: "private, max-age=10",
        ]
        headers[HTTPField.Name("X-Recording-Start")!] = Time90k.rfc3339(view.result.start90k)
        headers[HTTPField.Name("X-Recording-Start90k")!] = String(view.result.start90k)
        headers[HTTPField.Name("X-Recording-End")!] = Time90k.rfc3339(view.result.end90k)
        headers[HTTPField.Name("X-Recording-End90k")!] = String(view.result.end90k)
        if !view.result.gaps.isEmpty {
            headers[HTTPField.Name("X-Recording-Gaps")!] = view.result.gaps.map { "\($0.lowerBound)-\($0.upperBound)" }
                .joined(separator: ",")
        }
        if let t = view.result.truncatedAt { headers[HTTPField.Name("X-Recording-Truncated90k")!] = String(t) }

        // If-Range with a different validator: the client's partial copy is stale, send it all.
        var rangeHeader = r.headers[.range]
        if let ifRange = r.headers[.ifRange], ifRange != view.etag { rangeHeader = nil }
        if let inm = r.headers[.ifNoneMatch],
            inm.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == view.etag })
        {
            return Response(status: .notModified, headers: headers)
        }
        var status = HTTPResponse.Status.ok
        var window = ByteRange(first: 0, last: size - 1)
        switch ByteRange.parse(rangeHeader, size: size) {
        case .whole: break
        case .unsatisfiable:
            var e = APIError(
                .rangeNotSatisfiable, "range_not_satisfiable",
                "Range '\(rangeHeader ?? "")' is outside the \(size)-byte file")
            e.headers = [.contentRange: "bytes */\(size)", .acceptRanges: "bytes", .eTag: view.etag]
            throw e
        case .range(let b):
            status = .partialContent
            window = b
            headers[.contentRange] = "bytes \(b.first)-\(b.last)/\(size)"
        }
        headers[.contentLength] = String(window.count)
        if r.method == .head { return Response(status: status, headers: headers) }
        let bytes = window
        return Response(
            status: status, headers: headers,
            body: ResponseBody(contentLength: Int(bytes.count)) { writer in
                try await Self.write(mp4, bytes, to: &writer)
                try await writer.finish(nil)
            })
    }

    /// Streams bytes [first, last] of the virtual file: header bytes from memory, media in
    /// 1 MiB positioned reads off the concurrency pool.
    static func write(_ mp4: VirtualMP4, _ window: ByteRange, to writer: inout any ResponseBodyWriter) async throws {
        var at: Int64 = 0
        let chunk: Int64 = 1 << 20
        for part in mp4.parts {
            let partStart = at
            let partEnd = at + part.length
            at = partEnd
            let lo = max(window.first, partStart)
            let hi = min(window.last + 1, partEnd)
            guard lo < hi else { if partStart > window.last { break } else { continue } }
            switch part {
            case .bytes(let b):
                try await writer.write(ByteBuffer(bytes: b[Int(lo - partStart)..<Int(hi - partStart)]))
            case .file(let path, let offset, _):
                var pos = lo
                while pos < hi {
                    let n = Int(min(chunk, hi - pos))
                    let fileOffset = offset + (pos - partStart)
                    let buf = try await offload { try Self.read(path, at: fileOffset, count: n) }
                    try await writer.write(buf)
                    pos += Int64(n)
                }
            }
        }
    }

    static func read(_ path: String, at offset: Int64, count: Int) throws -> ByteBuffer {
        var buf = ByteBufferAllocator().buffer(capacity: count)
        try buf.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { p in
            try FileRange.read(path, at: offset, into: UnsafeMutableRawBufferPointer(rebasing: p[0..<count]))
            return count
        }
        return buf
    }
}
