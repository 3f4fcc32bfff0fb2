import CFFmpeg
import CTurboJPEG

/// Turns a decoded picture into a JPEG: libswscale scales it (when asked) and converts it to
/// full-range 4:2:0, which is what JFIF viewers expect; libturbojpeg compresses the planes
/// directly, with no RGB step.
public final class JPEGEncoder {
    private var handle: tjhandle?
    private var sws: OpaquePointer?
    private var planes: [UInt8] = []

    public init() throws {
        guard let h = tjInitCompress() else { throw MediaError(.codec, "cannot start libturbojpeg") }
        handle = h
    }

    deinit {
        if let handle { tjDestroy(handle) }
        sws_freeContext(sws)
    }

    /// The output size for a requested width: never wider than the picture, height following
    /// the aspect ratio, both even (4:2:0 needs it).
    public static func outputSize(width w: Int, height h: Int, requestedWidth: Int?) -> (width: Int, height: Int) {
        guard let rw = requestedWidth, rw < w, w > 0 else { return (w & ~1, h & ~1) }
        let ow = max(16, rw) & ~1
        let oh = max(2, Int((Double(h) * Double(ow) / Double(w)).rounded())) & ~1
        return (ow, oh)
    }

    /// A rectangle to draw on the picture, normalised (0…1 from the top left): what a
    /// detection found, on its event's snapshot.
    public struct Outline: Sendable, Equatable {
        public var x, y, width, height: Double
        public init(x: Double, y: Double, width: Double, height: Double) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }
    }

    public func encode(
        _ picture: Picture, width requestedWidth: Int? = nil, quality: Int = 80, outline: Outline? = nil
    ) throws -> [UInt8] {
        let f = picture.frame
        let (ow, oh) = Self.outputSize(width: picture.width, height: picture.height, requestedWidth: requestedWidth)
        guard ow > 0, oh > 0 else { throw MediaError(.corrupt, "empty picture") }
        let scaling = ow != picture.width || oh != picture.height
        sws = sws_getCachedContext(
            sws, Int32(picture.width), Int32(picture.height), AVPixelFormat(rawValue: f.pointee.format),
            Int32(ow), Int32(oh), AV_PIX_FMT_YUV420P, scaling ? SWS_AREA : SWS_POINT, nil, nil, nil)
        guard let sws else { throw MediaError(.unsupported, "cannot convert pixel format \(f.pointee.format)") }
        // Limited-range video to full-range JPEG (yuvj formats are full range already).
        let fmt = AVPixelFormat(rawValue: f.pointee.format)
        let srcFull: Int32 =
            f.pointee.color_range == AVCOL_RANGE_JPEG || fmt == AV_PIX_FMT_YUVJ420P || fmt == AV_PIX_FMT_YUVJ422P
                || fmt == AV_PIX_FMT_YUVJ444P ? 1 : 0
        let coeffs = sws_getCoefficients(SWS_CS_ITU709)
        _ = sws_setColorspaceDetails(sws, coeffs, srcFull, coeffs, 1, 0, 1 << 16, 1 << 16)

        let cw = (ow + 1) / 2
        let ch = (oh + 1) / 2
        let need = ow * oh + 2 * cw * ch
        if planes.count < need { planes = [UInt8](repeating: 0, count: need) }
        return try planes.withUnsafeMutableBufferPointer { buf -> [UInt8] in
            let y = buf.baseAddress!
            let u = y + ow * oh
            let v = u + cw * ch
            var dst: [UnsafeMutablePointer<UInt8>?] = [y, u, v, nil]
            var dstStride: [Int32] = [Int32(ow), Int32(cw), Int32(cw), 0]
            let srcData = withUnsafePointer(to: &f.pointee.data) {
                $0.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { p in (0..<4).map { p[$0] } }
            }
            let srcStride = withUnsafePointer(to: &f.pointee.linesize) {
                $0.withMemoryRebound(to: Int32.self, capacity: 8) { p in (0..<4).map { p[$0] } }
            }
            let rows = sws_scale(sws, srcData, srcStride, 0, Int32(picture.height), &dst, &dstStride)
            guard rows == oh else { throw MediaError(.codec, "cannot scale the picture") }
            if let outline { Self.draw(outline, y: y, u: u, v: v, width: ow, height: oh) }

            var src: [UnsafePointer<UInt8>?] = [UnsafePointer(y), UnsafePointer(u), UnsafePointer(v)]
            var strides: [Int32] = [Int32(ow), Int32(cw), Int32(cw)]
            var out: UnsafeMutablePointer<UInt8>?
            var size: UInt = 0
            let rc = tjCompressFromYUVPlanes(
                handle, &src, Int32(ow), &strides, Int32(oh), Int32(TJSAMP_420.rawValue), &out, &size,
                Int32(quality), TJFLAG_FASTDCT)
            defer { if let out { tjFree(out) } }
            guard rc == 0, let out else {
                throw MediaError(.codec, "JPEG compression failed: \(String(cString: tjGetErrorStr2(handle)))")
            }
            return Array(UnsafeBufferPointer(start: out, count: Int(size)))
        }
    }

    /// Draws a red rectangle, 1/200 of the picture's width thick (at least 2 pixels), on the
    /// 4:2:0 planes.
    static func draw(
        _ o: Outline, y: UnsafeMutablePointer<UInt8>, u: UnsafeMutablePointer<UInt8>, v: UnsafeMutablePointer<UInt8>,
        width: Int, height: Int
    ) {
        guard [o.x, o.y, o.width, o.height].allSatisfy({ $0.isFinite }), width > 0, height > 0 else { return }
        // Clamped before converting: a box from a hand-edited index may hold any number.
        func px(_ f: Double, _ size: Int) -> Int {
            Int((min(max(f, 0), 1) * Double(size - 1)).rounded())
        }
        let x0 = px(o.x, width)
        let x1 = px(o.x + o.width, width)
        let y0 = px(o.y, height)
        let y1 = px(o.y + o.height, height)
        guard x1 > x0, y1 > y0 else { return }
        let t = max(2, width / 200) & ~1
        let cw = (width + 1) / 2
        func fill(_ xa: Int, _ ya: Int, _ xb: Int, _ yb: Int) {
            let (xa, xb) = (max(xa, 0), min(xb, width - 1))
            let (ya, yb) = (max(ya, 0), min(yb, height - 1))
            guard xa <= xb, ya <= yb else { return }
            for row in ya...yb {
                for col in xa...xb { y[row * width + col] = 82 }
            }
            for row in (ya / 2)...(yb / 2) {
                for col in (xa / 2)...(xb / 2) {
                    u[row * cw + col] = 90
                    v[row * cw + col] = 240
                }
            }
        }
        fill(x0, y0, x1, y0 + t - 1)
        fill(x0, y1 - t + 1, x1, y1)
        fill(x0, y0, x0 + t - 1, y1)
        fill(x1 - t + 1, y0, x1, y1)
    }
}
