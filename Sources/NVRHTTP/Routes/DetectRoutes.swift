import Foundation
import HTTPTypes
import Hummingbird
import NVRRecorder
import NVRWorker

/// POST /api/detect (admin): the server's detector ([detect] in nvr.toml) on a JPEG picture
/// sent as the body, as `nvr detect` does it: a check that the runtime and model load, and
/// what the model finds in a picture of the user's own scene.
struct DetectRoutes: APIRoutes {
    let detection: DetectionOptions
    /// One picture at a time: each loads the model (tens of MB for the larger layouts).
    let busy = OneAtATime()
    /// The largest picture taken: a 4K JPEG is a few MB.
    static let maxPictureBytes = 16 << 20

    func register(on router: Router<NVRContext>) {
        router.post("/api/detect") { r, c in try await detect(r, c) }
    }

    func detect(_ r: Request, _ c: NVRContext) async throws -> Response {
        try admin(c)
        let minScore: Double
        if let v = Query(request: r).string("minScore") {
            guard let d = Double(v), d > 0, d < 1 else {
                throw APIError.badRequest("minScore='\(v.prefix(16))' must be a number between 0 and 1")
            }
            minScore = d
        } else {
            minScore = 0.5
        }
        guard r.headers[.contentType]?.lowercased().hasPrefix("image/jpeg") == true else {
            throw APIError(
                .unsupportedMediaType, "unsupported_media_type", "send a JPEG picture with Content-Type: image/jpeg")
        }
        // Claimed before the body is read: a second picture is refused without taking it in.
        guard busy.claim("detector") else {
            throw APIError(.conflict, "busy", "the detector is looking at another picture; try again in a moment")
        }
        defer { busy.release("detector") }
        let body: ByteBuffer
        do { body = try await r.body.collect(upTo: Self.maxPictureBytes) } catch {
            throw APIError(.contentTooLarge, "too_large", "the picture is larger than \(Self.maxPictureBytes >> 20) MB")
        }
        let jpeg = [UInt8](body.readableBytesView)
        let found = try await offload { [detection] () throws -> PictureDetection in
            do { return try PictureDetection(jpeg: jpeg, options: detection, minScore: minScore) } catch let e
                as PictureDetection.Failure
            {
                switch e {
                case .picture(let why): throw APIError.badRequest(why)
                case .detector(let why): throw APIError(.conflict, "detection_unavailable", why)
                }
            }
        }
        return try JSON.response(found)
    }
}
