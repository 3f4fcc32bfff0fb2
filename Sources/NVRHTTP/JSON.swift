import Foundation
import Hummingbird
import NVRPlayback

/// JSON answers: one encoder setup for every route.
enum JSON {
    static func encode(_ value: some Encodable) throws -> [UInt8] {
        let e = JSONEncoder()
        e.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        return Array(try e.encode(value))
    }

    static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        Response(
            status: status,
            headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: try encode(value))))
    }
}
