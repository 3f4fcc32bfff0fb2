import CNVRPlugin
import NVRMedia
import NVRTime

/// Push mode's C structures (`nvr_stream_params`, `nvr_packet`) turned into the host's types
/// in one place. Everything a plugin hands over is checked here — struct sizes against
/// `struct_size`, lengths, pointers, time bases — and streams the recorder cannot record are
/// dropped through an index map, so a plugin's `stream_index` always lands on the stream it
/// meant (video first, then one AAC stream, whatever order the plugin announced them in).
struct PluginStreams: Sendable {
    /// What the recorder is given: video first, then AAC audio if any.
    private(set) var descriptions: [StreamDescription] = []
    /// The plugin's stream index → an index into `descriptions`, or -1 (not recorded).
    private var map: [Int] = []
    /// Streams announced but not recorded, and why (logged once per begin_streams).
    private(set) var dropped: [String] = []

    static let maxStreams = 64
    static let maxExtradata = 1 << 20
    /// Larger than any compressed frame a camera sends; a bigger one is a plugin's mistake.
    static let maxPacket = 64 << 20

    /// Reads `count` stream descriptions starting at `base`, stepping by the plugin's own
    /// `struct_size` (a newer plugin's larger struct keeps our fields at their offsets).
    static func convert(_ base: UnsafeRawPointer, count: Int) -> Result<PluginStreams, PluginError> {
        guard (1...maxStreams).contains(count) else { return .failure(PluginError("\(count) streams announced")) }
        let stride = Int(base.loadUnaligned(as: UInt32.self))
        guard stride >= MemoryLayout<nvr_stream_params>.size, stride <= 4096 else {
            return .failure(
                PluginError(
                    "nvr_stream_params.struct_size \(stride) (this host needs at least \(MemoryLayout<nvr_stream_params>.size))"
                ))
        }
        var out = PluginStreams()
        out.map = Array(repeating: -1, count: count)
        var video: (Int, StreamDescription)?
        var audio: (Int, StreamDescription)?
        for i in 0..<count {
            let p = (base + i * stride).loadUnaligned(as: nvr_stream_params.self)
            guard Int(p.struct_size) == stride else {
                return .failure(PluginError("stream \(i): struct_size \(p.struct_size), stream 0 said \(stride)"))
            }
            switch describe(p) {
            case .failure(let why): out.dropped.append("stream \(i): \(why.description)")
            case .success(let d):
                if d.codec.isVideo {
                    if video == nil { video = (i, d) } else { out.dropped.append("stream \(i): a second video stream") }
                } else if audio == nil {
                    audio = (i, d)
                } else {
                    out.dropped.append("stream \(i): a second audio stream")
                }
            }
        }
        guard let video else {
            return .failure(
                PluginError(
                    "no H.264 or H.265 video stream\(out.dropped.isEmpty ? "" : " (" + out.dropped.joined(separator: "; ") + ")")"
                ))
        }
        out.descriptions = [video.1]
        out.map[video.0] = 0
        if let audio {
            out.descriptions.append(audio.1)
            out.map[audio.0] = 1
        }
        return .success(out)
    }

    /// One stream's parameters, or why they cannot be recorded.
    private static func describe(_ p: nvr_stream_params) -> Result<StreamDescription, PluginError> {
        let codec: Codec
        switch p.codec {
        case UInt32(NVR_CODEC_H264.rawValue): codec = .h264
        case UInt32(NVR_CODEC_H265.rawValue): codec = .h265
        case UInt32(NVR_CODEC_AAC.rawValue): codec = .aac
        default: return .failure(PluginError("codec \(p.codec) is not one the recorder stores"))
        }
        guard Timebase.isValid(num: Int64(p.timebase_num), den: Int64(p.timebase_den)) else {
            return .failure(PluginError("time base \(p.timebase_num)/\(p.timebase_den)"))
        }
        guard p.extradata_size >= 0, p.extradata_size <= maxExtradata, p.extradata != nil || p.extradata_size == 0
        else {
            return .failure(PluginError("extradata of \(p.extradata_size) bytes"))
        }
        let extradata = p.extradata.map { Array(UnsafeBufferPointer(start: $0, count: p.extradata_size)) } ?? []
        if codec == .aac {
            guard (1...384_000).contains(p.sample_rate), (1...8).contains(p.channels) else {
                return .failure(PluginError("AAC at \(p.sample_rate) Hz with \(p.channels) channels"))
            }
        }
        // A picture size out of reason is unknown (the segmenter reads it from the SPS).
        let plausible = { (v: Int32) in (16...16_384).contains(v) }
        let (w, h) = plausible(p.width) && plausible(p.height) ? (p.width, p.height) : (0, 0)
        return .success(
            StreamDescription(
                codec: codec, width: codec.isVideo ? w : 0, height: codec.isVideo ? h : 0,
                sampleRate: codec == .aac ? p.sample_rate : 0, channels: codec == .aac ? p.channels : 0,
                timebaseNum: p.timebase_num, timebaseDen: p.timebase_den, extradata: extradata))
    }

    /// A pushed packet in the recorder's terms, or nil for one to ignore (a stream not
    /// recorded, a size or pointer that cannot be right, no streams announced yet).
    func packet(_ raw: UnsafeRawPointer) -> InputPacket? {
        guard Int(raw.loadUnaligned(as: UInt32.self)) >= MemoryLayout<nvr_packet>.size else { return nil }
        let p = raw.loadUnaligned(as: nvr_packet.self)
        guard p.stream_index >= 0, Int(p.stream_index) < map.count, map[Int(p.stream_index)] >= 0 else { return nil }
        guard p.size >= 0, p.size <= Self.maxPacket, p.data != nil || p.size == 0 else { return nil }
        return InputPacket(
            stream: map[Int(p.stream_index)], pts: p.pts, dts: p.dts, duration: p.duration, isKey: p.key != 0,
            data: UnsafeRawBufferPointer(start: p.data, count: p.size))
    }
}
