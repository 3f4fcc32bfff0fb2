import Foundation
import NVRIndex
import NVRMedia

/// What a run records of a connection's streams, decided at key frames: pure functions of the
/// streams and the frame (the Segmenter keeps the state).
enum RecordedStreams {
    /// The streams completed at a run's first key frame: parameter sets taken from the frame
    /// when none came out of band, the picture size from them when nothing said it before, and
    /// audio without a description dropped.
    static func completed(
        _ streams: [StreamDescription], firstKeyFrame data: UnsafeRawBufferPointer,
        camera: String
    ) throws -> [StreamDescription] {
        var s = streams
        if s[0].extradata.isEmpty {
            s[0].extradata = ParameterSets.annexB(from: data, codec: s[0].codec, lengthPrefixed: !s[0].isAnnexB)
            guard !s[0].extradata.isEmpty else {
                throw MediaError(
                    .unsupported, "camera \(camera): no \(s[0].codec.rawValue) parameter sets in the stream")
            }
        }
        if s[0].width <= 0 || s[0].height <= 0,
            let size = ParameterSets.pictureSize(annexB: s[0].extradata, codec: s[0].codec)
        {
            s[0].width = size.width
            s[0].height = size.height
        }
        if s.count > 1 && s[1].extradata.isEmpty { s.removeLast() }
        return s
    }

    /// The video stream with new parameter sets if a key frame carries an SPS whose picture
    /// size differs from the current one (a camera reconfigured mid-stream); nil otherwise.
    /// `seen`: the in-band parameter sets last looked at (parsed only when they change).
    static func resized(
        _ video: StreamDescription, keyFrame data: UnsafeRawBufferPointer, annexB: Bool,
        seen: inout [UInt8]
    ) -> StreamDescription? {
        let ps = ParameterSets.annexB(from: data, codec: video.codec, lengthPrefixed: !annexB)
        guard !ps.isEmpty, ps != seen else { return nil }
        seen = ps
        guard let size = ParameterSets.pictureSize(annexB: ps, codec: video.codec),
            size.width != video.width || size.height != video.height
        else { return nil }
        var s = video
        s.extradata = ps
        s.width = size.width
        s.height = size.height
        if !annexB { s.packetFormat = .lengthPrefixed }
        return s
    }
}

extension SampleEntryRecord {
    /// The index's row for one track of an init segment.
    init(track t: TrackInfo) {
        self.init(
            codec: t.stream.codec.rawValue, rfc6381: t.rfc6381, width: Int(t.stream.width),
            height: Int(t.stream.height),
            sampleRate: Int(t.stream.sampleRate), channels: Int(t.stream.channels), timescale: Int(t.timescale),
            extradata: Data(t.stream.extradata), box: Data(t.sampleEntry))
    }
}
