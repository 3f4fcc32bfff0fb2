import CFFmpeg

/// The codecs the recorder stream-copies.
public enum Codec: String, Sendable, Codable, CaseIterable {
    case h264, h265, aac

    public var isVideo: Bool { self != .aac }

    var avCodecID: AVCodecID {
        switch self {
        case .h264: return AV_CODEC_ID_H264
        case .h265: return AV_CODEC_ID_HEVC
        case .aac: return AV_CODEC_ID_AAC
        }
    }

    init?(_ id: AVCodecID) {
        switch id {
        case AV_CODEC_ID_H264: self = .h264
        case AV_CODEC_ID_HEVC: self = .h265
        case AV_CODEC_ID_AAC: self = .aac
        default: return nil
        }
    }
}
