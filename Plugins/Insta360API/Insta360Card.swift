import Foundation

/// An Insta360 media file name: `(IMG|VID)_YYYYMMDD_HHMMSS_<lens><stream>_<serial>.<ext>`,
/// `.insv`/`.insp` for 360 media, `.mp4`/`.jpg` for single-lens.
public struct Insta360FileName: Sendable, Equatable {
    public var isVideo: Bool
    /// "00", "10", … (lens digit, stream digit); nil when the name has no such part.
    public var lensStream: String?
    public var ext: String
    public var is360: Bool { ext == "insv" || ext == "insp" }

    public init?(_ name: String) {
        let base = name.split(separator: "/").last.map(String.init) ?? name
        guard let dot = base.lastIndex(of: ".") else { return nil }
        ext = base[base.index(after: dot)...].lowercased()
        let parts = base[..<dot].split(separator: "_")
        guard parts.count >= 3, parts[0] == "VID" || parts[0] == "IMG" else { return nil }
        isVideo = parts[0] == "VID"
        lensStream = parts.count >= 5 && parts[3].count == 2 && parts[3].allSatisfy(\.isNumber) ? String(parts[3]) : nil
        guard ["insv", "insp", "mp4", "jpg", "dng", "lrv"].contains(ext) else { return nil }
    }

    /// Whether the file's span goes on the NVR's timeline (and is backfilled): single-lens MP4
    /// and the first lens (`_00_`) of a 360 pair. The `_10_` file holds the same moments seen by
    /// the other lens, so splicing it too would double every second; a stitched 360 picture
    /// would need transcoding, which the NVR never does. Listed and downloadable either way.
    public var onTimeline: Bool {
        guard isVideo, ext == "mp4" || ext == "insv" else { return false }
        return lensStream == nil || lensStream == "00"
    }
}

/// A card video's span on the camera's clock: OSC's dateTimeZone marks the END of capture.
public enum Insta360CardVideo {
    /// [end − duration, end] in UTC seconds, the zone honoured; nil when the time cannot be read.
    public static func span(dateTimeZone: String, duration: Double) -> (start: Double, end: Double)? {
        guard let t = OSC.parseDateTimeZone(dateTimeZone) else { return nil }
        return (t.epoch - duration, t.epoch)
    }
}

/// Reads an MP4 (or .insv, the same container) file's duration from its header with a few
/// small reads, never the whole file: top-level box headers up to `moov`, then `mvhd`.
public enum MP4Header {
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// `read(offset, length)` returns up to `length` bytes at `offset` (an HTTP Range request).
    /// Returns seconds.
    public static func duration(size: Int64, read: (Int64, Int) throws -> [UInt8]) throws -> Double {
        guard size > 0 else { throw Failure(description: "the camera gives the file's size as \(size)") }
        // The first read is generous: ftyp, and moov too when the file is "fast start".
        let headLength = 4096
        let head = try read(0, Int(min(Int64(headLength), size)))
        var offset: Int64 = 0
        var boxes = 0
        while offset + 8 <= size {
            boxes += 1
            guard boxes <= 64 else { throw Failure(description: "no moov box among the first 64 boxes") }
            let header: [UInt8]
            if offset + 16 <= Int64(head.count) {
                header = Array(head[Int(offset)..<Int(offset) + 16])
            } else {
                header = try read(offset, Int(min(16, size - offset)))
            }
            guard header.count >= 8 else { throw Failure(description: "file ends inside a box header at \(offset)") }
            var boxSize = Int64(be32(header, 0))
            let type = String(decoding: header[4..<8], as: UTF8.self)
            var headerSize: Int64 = 8
            if boxSize == 1 {
                guard header.count >= 16 else { throw Failure(description: "truncated 64-bit box size at \(offset)") }
                boxSize = Int64(bitPattern: be64(header, 8))
                headerSize = 16
            } else if boxSize == 0 {
                boxSize = size - offset
            }
            // Sizes come from the camera's file: one past the end is damage, not arithmetic to do.
            guard boxSize >= headerSize, boxSize <= size - offset else {
                throw Failure(description: "bad box size \(boxSize) at \(offset)")
            }
            if type == "moov" {
                return try movieDuration(
                    moovStart: offset + headerSize, moovEnd: min(offset + boxSize, size), head: head, read: read)
            }
            offset += boxSize
        }
        throw Failure(description: "no moov box (is the file still being written?)")
    }

    private static func movieDuration(
        moovStart: Int64, moovEnd: Int64, head: [UInt8],
        read: (Int64, Int) throws -> [UInt8]
    ) throws -> Double {
        var offset = moovStart
        var children = 0
        while offset + 8 <= moovEnd {
            // mvhd comes first in every muxer's moov; a moov of thousands of tiny boxes would
            // cost a Range request each.
            children += 1
            guard children <= 256 else { throw Failure(description: "no mvhd among the first 256 boxes of moov") }
            let want = Int(min(128, moovEnd - offset))
            let bytes: [UInt8] =
                offset + Int64(want) <= Int64(head.count)
                ? Array(head[Int(offset)..<Int(offset) + want]) : try read(offset, want)
            guard bytes.count >= 8 else { break }
            let boxSize = Int64(be32(bytes, 0))
            let type = String(decoding: bytes[4..<8], as: UTF8.self)
            if type == "mvhd" {
                guard bytes.count >= 32 else { throw Failure(description: "truncated mvhd") }
                let version = bytes[8]
                let timescale: UInt32
                let duration: UInt64
                if version == 1 {
                    guard bytes.count >= 44 else { throw Failure(description: "truncated mvhd") }
                    timescale = be32(bytes, 28)
                    duration = be64(bytes, 32)
                } else {
                    timescale = be32(bytes, 20)
                    duration = UInt64(be32(bytes, 24))
                }
                guard timescale > 0 else { throw Failure(description: "mvhd timescale is 0") }
                guard duration != UInt64.max, duration != UInt64(UInt32.max) else {
                    throw Failure(description: "mvhd gives no duration (a fragmented file?)")
                }
                return Double(duration) / Double(timescale)
            }
            guard boxSize >= 8 else { break }
            offset += boxSize
        }
        throw Failure(description: "moov has no mvhd")
    }

    private static func be32(_ b: [UInt8], _ i: Int) -> UInt32 {
        UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
    }

    private static func be64(_ b: [UInt8], _ i: Int) -> UInt64 {
        UInt64(be32(b, i)) << 32 | UInt64(be32(b, i + 4))
    }
}
