import Foundation
import HTTPTypes
import Hummingbird
import NVRIndex
import NVRMedia
import NVRPlayback
import NVRTime

/// Several cameras' recordings of one range as one ZIP (MultiCameraExport), streamed as its
/// files are read.
struct ExportRoutes: IndexedRoutes {
    let index: any IndexStore
    let storage: StorageLayout
    let maxViewSeconds: Int
    let recent = ExportCache()

    func register(on router: Router<NVRContext>) {
        router.get("/api/export.zip") { r, c in try await exportZip(r, c) }
        router.head("/api/export.zip") { r, c in try await exportZip(r, c) }
    }

    /// GET/HEAD /api/export.zip?cameras=a,b,c&start=&end=[&speed=]
    func exportZip(_ r: Request, _ c: NVRContext) async throws -> Response {
        let who = try identity(c)
        let query = Query(request: r)
        guard let list = query.string("cameras") else {
            throw APIError.badRequest("cameras is required: camera names separated by commas")
        }
        let names = list.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard !names.contains(""), Set(names).count == names.count else {
            throw APIError.badRequest("cameras: name each camera once, separated by commas (front,yard)")
        }
        let range = try query.range()
        let speed = try query.int("speed", in: Timelapse.speeds)
        let limit: Int64 =
            speed == nil
            ? Int64(maxViewSeconds) * 90_000 : Int64(PlaybackRoutes.maxTimelapseDays) * 86_400 * 90_000
        guard Time90k.length(range) <= limit else {
            throw APIError(
                .badRequest, "range_too_long",
                "the range is \(Time90k.describeDuration(Time90k.length(range))); an export covers at most \(Time90k.describeDuration(limit))"
                    + (speed == nil ? " (http.max_view_seconds; a timelapse may cover 31 days)" : "")
            )
        }
        let cameras = try await offload { [index] in
            try names.map { name in
                guard who.mayView(camera: name), let cam = try index.camera(named: name) else {
                    throw APIError.notFound("no camera named '\(name.prefix(64))'")
                }
                return cam
            }
        }
        let export = try await offload { [index, storage, recent] in
            try recent.export(index: index, storage: storage, cameras: cameras, range: range, speed: speed)
        }
        let archive = export.archive
        let stamp = Time90k.rfc3339(range.lowerBound).replacingOccurrences(of: ":", with: "")
        var headers: HTTPFields = [
            .contentType: "application/zip", .contentLength: String(archive.size), .acceptRanges: "none",
            .cacheControl: "private, no-store",
        ]
        headers[HTTPField.Name("Content-Disposition")!] =
            "attachment; filename=\"nvr-\(speed == nil ? "" : "timelapse-")\(stamp).zip\""
        // What the archive holds, for a page to say before the download.
        headers[HTTPField.Name("X-Export-Cameras")!] = export.files.map(\.camera).joined(separator: ",")
        headers[HTTPField.Name("X-Export-Empty")!] = export.empty.joined(separator: ",")
        if r.method == .head { return Response(status: .ok, headers: headers) }
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody(contentLength: Int(archive.size)) { writer in
                // The reader is a value: each step reads on the blocking pool and hands it back.
                var reader = archive.reader()
                while true {
                    let current = reader
                    let (next, bytes) = try await offload {
                        var r = current
                        let b = try r.next()
                        return (r, b)
                    }
                    reader = next
                    guard let bytes else { break }
                    try await writer.write(ByteBuffer(bytes: bytes))
                }
                try await writer.finish(nil)
            })
    }
}
