import CFFmpeg
import CTurboJPEG

/// A JPEG picture as packed RGB (libturbojpeg), scaled to a given size (libswscale): how
/// `nvr detect` shows a picture file to the model. The file is untrusted: its header's size is
/// checked before anything is allocated for it.
public enum JPEGDecoder {
    /// The largest picture decoded (side, pixels).
    static let maxSide = 16_384, maxPixels = 64 * 1024 * 1024

    /// Decodes `jpeg` and scales it to width × height, packed RGB.
    public static func rgb(_ jpeg: [UInt8], width: Int, height: Int) throws -> [UInt8] {
        guard let handle = tjInitDecompress() else { throw MediaError(.codec, "cannot start libturbojpeg") }
        defer { tjDestroy(handle) }
        var w: Int32 = 0
        var h: Int32 = 0
        var subsampling: Int32 = 0
        var colorspace: Int32 = 0
        let header = jpeg.withUnsafeBufferPointer {
            tjDecompressHeader3(handle, $0.baseAddress, UInt(jpeg.count), &w, &h, &subsampling, &colorspace)
        }
        guard header == 0, w > 0, h > 0, Int(w) <= maxSide, Int(h) <= maxSide, Int(w) * Int(h) <= maxPixels else {
            throw MediaError(.corrupt, "not a JPEG picture this NVR can read")
        }
        var full = [UInt8](repeating: 0, count: Int(w) * Int(h) * 3)
        let rc = jpeg.withUnsafeBufferPointer { src in
            full.withUnsafeMutableBufferPointer { dst in
                tjDecompress2(
                    handle, src.baseAddress, UInt(jpeg.count), dst.baseAddress, w, 0, h, Int32(TJPF_RGB.rawValue), 0)
            }
        }
        guard rc == 0 else {
            throw MediaError(.corrupt, "cannot decode the JPEG: \(String(cString: tjGetErrorStr2(handle)))")
        }
        guard
            let sws = sws_getContext(
                w, h, AV_PIX_FMT_RGB24, Int32(width), Int32(height), AV_PIX_FMT_RGB24, SWS_BILINEAR, nil, nil, nil)
        else { throw MediaError(.unsupported, "cannot scale the picture") }
        defer { sws_freeContext(sws) }
        var out = [UInt8](repeating: 0, count: width * height * 3)
        let rows = full.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                var srcData: [UnsafePointer<UInt8>?] = [src.baseAddress, nil, nil, nil]
                var srcStride: [Int32] = [w * 3, 0, 0, 0]
                var dstData: [UnsafeMutablePointer<UInt8>?] = [dst.baseAddress, nil, nil, nil]
                var dstStride: [Int32] = [Int32(width * 3), 0, 0, 0]
                return sws_scale(sws, &srcData, &srcStride, 0, h, &dstData, &dstStride)
            }
        }
        guard rows == height else { throw MediaError(.codec, "cannot scale the picture") }
        return out
    }
}
