import CFFmpeg

/// One elementary stream as the recorder sees it: enough to write an MP4 track.
public struct StreamDescription: Sendable, Equatable {
    public var codec: Codec
    public var width: Int32
    public var height: Int32
    public var sampleRate: Int32
    public var channels: Int32
    /// Time base of the packets' timestamps.
    public var timebaseNum: Int32
    public var timebaseDen: Int32
    /// avcC/hvcC, Annex B parameter sets, or AudioSpecificConfig.
    public var extradata: [UInt8]
    /// How video packets frame their NAL units; nil = as the extradata suggests.
    public var packetFormat: PacketFormat?

    public enum PacketFormat: Sendable, Equatable { case annexB, lengthPrefixed }

    public init(
        codec: Codec, width: Int32 = 0, height: Int32 = 0, sampleRate: Int32 = 0, channels: Int32 = 0,
        timebaseNum: Int32, timebaseDen: Int32, extradata: [UInt8]
    ) {
        self.codec = codec
        self.width = width
        self.height = height
        self.sampleRate = sampleRate
        self.channels = channels
        self.timebaseNum = timebaseNum
        self.timebaseDen = timebaseDen
        self.extradata = extradata
    }

    /// True when samples arrive with start codes and need converting to length prefixes.
    public var isAnnexB: Bool {
        guard codec.isVideo else { return false }
        if let packetFormat { return packetFormat == .annexB }
        // avcC and hvcC both start with configurationVersion 1; Annex B starts with 0 0 (0) 1.
        return extradata.first != 1
    }

    /// A short label such as "h264 1280x720" or "aac 48000 Hz 2 ch".
    public var summary: String {
        codec.isVideo ? "\(codec.rawValue) \(width)x\(height)" : "\(codec.rawValue) \(sampleRate) Hz \(channels) ch"
    }

    /// Reads a libav stream's parameters; nil for codecs the recorder does not store.
    public init?(_ stream: UnsafeMutablePointer<AVStream>) {
        guard let par = stream.pointee.codecpar, let codec = Codec(par.pointee.codec_id) else { return nil }
        var extradata: [UInt8] = []
        if let e = par.pointee.extradata, par.pointee.extradata_size > 0 {
            extradata = Array(UnsafeBufferPointer(start: e, count: Int(par.pointee.extradata_size)))
        }
        self.init(
            codec: codec, width: par.pointee.width, height: par.pointee.height,
            sampleRate: par.pointee.sample_rate, channels: par.pointee.ch_layout.nb_channels,
            timebaseNum: stream.pointee.time_base.num, timebaseDen: stream.pointee.time_base.den,
            extradata: extradata)
    }

    /// Copies these parameters into a libav stream's codecpar.
    func fill(_ par: UnsafeMutablePointer<AVCodecParameters>) {
        par.pointee.codec_type = codec.isVideo ? AVMEDIA_TYPE_VIDEO : AVMEDIA_TYPE_AUDIO
        par.pointee.codec_id = codec.avCodecID
        par.pointee.codec_tag = 0
        if codec.isVideo {
            par.pointee.width = width
            par.pointee.height = height
        } else {
            par.pointee.sample_rate = sampleRate
            av_channel_layout_default(&par.pointee.ch_layout, max(channels, 1))
            par.pointee.frame_size = 1024
        }
        if !extradata.isEmpty {
            let size = extradata.count
            let buf = av_mallocz(size + Int(AV_INPUT_BUFFER_PADDING_SIZE))!.assumingMemoryBound(to: UInt8.self)
            extradata.withUnsafeBufferPointer { buf.update(from: $0.baseAddress!, count: size) }
            par.pointee.extradata = buf
            par.pointee.extradata_size = Int32(size)
        }
    }
}
