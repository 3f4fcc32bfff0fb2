import CFFmpeg

/// Shrinks a decoded picture to a small 8-bit grey image (the luma plane, area-averaged):
/// what motion detection compares. Averaging many pixels into one also removes most sensor
/// noise before the comparison.
public final class GreyScaler {
    public let width: Int
    public let height: Int
    private var sws: OpaquePointer?

    /// `width`: of the output; the height follows the picture's aspect ratio when first used.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// The output size for a picture: `maxWidth` wide (never wider than the picture).
    public static func size(forWidth w: Int, height h: Int, maxWidth: Int) -> (width: Int, height: Int) {
        let ow = min(maxWidth, w)
        return (ow, max(1, Int((Double(h) * Double(ow) / Double(max(w, 1))).rounded())))
    }

    deinit { sws_freeContext(sws) }

    /// Writes the picture, scaled, into `out` (width × height bytes, rows packed).
    public func scale(_ picture: Picture, into out: UnsafeMutablePointer<UInt8>) throws {
        let f = picture.frame
        sws = sws_getCachedContext(
            sws, Int32(picture.width), Int32(picture.height), AVPixelFormat(rawValue: f.pointee.format),
            Int32(width), Int32(height), AV_PIX_FMT_GRAY8, SWS_AREA, nil, nil, nil)
        guard let sws else { throw MediaError(.unsupported, "cannot convert pixel format \(f.pointee.format) to grey") }
        var dst: [UnsafeMutablePointer<UInt8>?] = [out, nil, nil, nil]
        var dstStride: [Int32] = [Int32(width), 0, 0, 0]
        let srcData = withUnsafePointer(to: &f.pointee.data) {
            $0.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { p in (0..<4).map { p[$0] } }
        }
        let srcStride = withUnsafePointer(to: &f.pointee.linesize) {
            $0.withMemoryRebound(to: Int32.self, capacity: 8) { p in (0..<4).map { p[$0] } }
        }
        let rows = sws_scale(sws, srcData, srcStride, 0, Int32(picture.height), &dst, &dstStride)
        guard rows == height else { throw MediaError(.codec, "cannot scale the picture to grey") }
    }
}
