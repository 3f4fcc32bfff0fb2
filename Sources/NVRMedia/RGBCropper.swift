import CFFmpeg

/// Cuts a region out of a decoded picture and scales it to a fixed size as packed RGB (3 bytes
/// a pixel): what a detection model looks at. libswscale reads only the region's rows and
/// columns, so cropping a small region of a large picture costs little.
public final class RGBCropper {
    public let width: Int
    public let height: Int
    private var sws: OpaquePointer?
    private var cached: (w: Int, h: Int, format: Int32) = (0, 0, -1)

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    deinit { sws_freeContext(sws) }

    /// The region in pixels, snapped to even coordinates (4:2:0 chroma) and at least 16 pixels
    /// a side, inside the picture.
    public static func pixels(x: Double, y: Double, w: Double, h: Double, pictureWidth pw: Int, pictureHeight ph: Int)
        -> (x: Int, y: Int, width: Int, height: Int)?
    {
        guard pw >= 16, ph >= 16, [x, y, w, h].allSatisfy({ $0.isFinite }) else { return nil }
        let x0 = min(max(Int(x * Double(pw)), 0), pw - 16) & ~1
        let y0 = min(max(Int(y * Double(ph)), 0), ph - 16) & ~1
        let cw = min(max(Int((w * Double(pw)).rounded()), 16), pw - x0)
        let ch = min(max(Int((h * Double(ph)).rounded()), 16), ph - y0)
        return (x0, y0, cw, ch)
    }

    /// Writes the region (normalised, 0…1 from the top left) of `picture`, scaled to
    /// width × height, into `out` (width × height × 3 bytes). Returns the region as cut (after
    /// snapping), normalised.
    @discardableResult
    public func crop(
        _ picture: Picture, x: Double, y: Double, w: Double, h: Double, into out: UnsafeMutablePointer<UInt8>
    ) throws -> (x: Double, y: Double, width: Double, height: Double) {
        let f = picture.frame
        let format = f.pointee.format
        guard let r = Self.pixels(x: x, y: y, w: w, h: h, pictureWidth: picture.width, pictureHeight: picture.height),
            let desc = av_pix_fmt_desc_get(AVPixelFormat(rawValue: format)),
            desc.pointee.flags & UInt64(AV_PIX_FMT_FLAG_PLANAR) != 0 || desc.pointee.nb_components == 1,
            desc.pointee.flags & UInt64(AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_BITSTREAM) == 0
        else {
            throw MediaError(
                .unsupported, "cannot crop a \(picture.width)x\(picture.height) picture of format \(format)")
        }
        if sws == nil || cached.w != r.width || cached.h != r.height || cached.format != format {
            sws_freeContext(sws)
            sws = sws_getContext(
                Int32(r.width), Int32(r.height), AVPixelFormat(rawValue: format), Int32(width), Int32(height),
                AV_PIX_FMT_RGB24, SWS_BILINEAR, nil, nil, nil)
            cached = (r.width, r.height, format)
        }
        guard let sws else { throw MediaError(.unsupported, "cannot convert pixel format \(format) to RGB") }
        // Each plane's pointer moved to the region's corner: chroma planes by the subsampling,
        // each by its bytes per pixel (2 for 10-bit, 2 for NV12's interleaved chroma).
        let log2w = Int(desc.pointee.log2_chroma_w)
        let log2h = Int(desc.pointee.log2_chroma_h)
        var step = [1, 1, 1, 1]
        withUnsafePointer(to: desc.pointee.comp) {
            $0.withMemoryRebound(to: AVComponentDescriptor.self, capacity: 4) { comp in
                for c in (0..<Int(desc.pointee.nb_components)).reversed() {
                    let plane = Int(comp[c].plane)
                    if (0..<4).contains(plane) { step[plane] = max(Int(comp[c].step), 1) }
                }
            }
        }
        let srcStride = withUnsafePointer(to: &f.pointee.linesize) {
            $0.withMemoryRebound(to: Int32.self, capacity: 8) { p in (0..<4).map { p[$0] } }
        }
        let srcData: [UnsafePointer<UInt8>?] = withUnsafePointer(to: &f.pointee.data) {
            $0.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 8) { p in
                (0..<4).map { i -> UnsafePointer<UInt8>? in
                    guard let base = p[i] else { return nil }
                    let chroma = i == 1 || i == 2
                    let (sx, sy) = chroma ? (r.x >> log2w, r.y >> log2h) : (r.x, r.y)
                    return UnsafePointer(base + sy * Int(srcStride[i]) + sx * step[i])
                }
            }
        }
        var dst: [UnsafeMutablePointer<UInt8>?] = [out, nil, nil, nil]
        var dstStride: [Int32] = [Int32(width * 3), 0, 0, 0]
        let rows = sws_scale(sws, srcData, srcStride, 0, Int32(r.height), &dst, &dstStride)
        guard rows == height else { throw MediaError(.codec, "cannot scale the region to RGB") }
        let (pw, ph) = (Double(picture.width), Double(picture.height))
        return (Double(r.x) / pw, Double(r.y) / ph, Double(r.width) / pw, Double(r.height) / ph)
    }
}
