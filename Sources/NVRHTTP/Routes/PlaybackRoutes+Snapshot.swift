import Foundation
import HTTPTypes
import Hummingbird
import NVRIndex
import NVRPlayback
import NVRTime

extension PlaybackRoutes {
    /// GET /api/cameras/{name}/snapshot.jpg[?at=T][&width=W] — the newest key frame (cached
    /// for a second) or the recorded frame nearest T.
    func snapshot(_ r: Request, _ cam: CameraRecord) async throws -> Response {
        let q = Query(request: r)
        let width = try q.int("width", in: 16...7680)
        let at = try q.time("at")
        let shot = try await offload { [snapshots] in
            do {
                if let at { return try snapshots.frame(cameraID: cam.id!, at: at, width: width) }
                return try snapshots.latest(cameraID: cam.id!, width: width)
            } catch is NothingRecorded {
                throw APIError(
                    .notFound, "nothing_recorded",
                    at.map { "\(cam.name) has no recording at \(Time90k.rfc3339($0))" }
                        ?? "\(cam.name) has no recordings yet")
            }
        }
        return Self.jpeg(shot, cacheControl: at == nil ? "no-cache" : "private, max-age=3600")
    }

    /// A snapshot as a response, with the frame's capture time in X-Frame-Time(90k).
    static func jpeg(_ shot: Snapshots.Snapshot, cacheControl: String) -> Response {
        var headers: HTTPFields = [.contentType: "image/jpeg", .cacheControl: cacheControl]
        headers[HTTPField.Name("X-Frame-Time")!] = Time90k.rfc3339(shot.time90k)
        headers[HTTPField.Name("X-Frame-Time90k")!] = String(shot.time90k)
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: shot.jpeg)))
    }

    /// GET /api/cameras/{name}/thumbnails?start=&end=&count=N[&width=W] — N evenly spaced
    /// snapshot URLs for a timeline strip, each marked with whether anything is recorded there.
    func thumbnails(_ r: Request, _ cam: CameraRecord) async throws -> Response {
        let q = Query(request: r)
        let range = try q.range()
        let count = try q.int("count", in: 1...500) ?? 10
        let width = try q.int("width", in: 16...7680) ?? 320
        struct Thumb: Encodable {
            var at: String
            var at90k: Int64
            var recorded: Bool
            var url: String
        }
        struct Out: Encodable {
            var camera: String
            var thumbnails: [Thumb]
        }
        return try await offload {
            let spans = try index.timelineSpans(cameraID: cam.id!, start90k: range.lowerBound, end90k: range.upperBound)
            let slices = Timeline.slices(spans, within: range)
            // The middle of each of N equal parts of the range.
            let step = Time90k.length(range) / Int64(count)
            let name = cam.name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? cam.name
            let thumbs = (0..<count).map { i -> Thumb in
                let t = range.lowerBound + step * Int64(i) + step / 2
                let recorded = slices.contains { $0.start90k <= t && t < $0.end90k }
                return Thumb(
                    at: Time90k.rfc3339(t), at90k: t, recorded: recorded,
                    url: "/api/cameras/\(name)/snapshot.jpg?at=\(t)&width=\(width)")
            }
            return try JSON.response(Out(camera: cam.name, thumbnails: thumbs))
        }
    }
}
