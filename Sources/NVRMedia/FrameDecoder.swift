import CFFmpeg

/// Proves a media file's first video key frame decodes (`nvr db check --deep`).
public enum FrameDecoder {
    /// Opens `path`, decodes its first video key frame, and returns its size; throws if it cannot.
    public static func decodeFirstKeyFrame(path: String) throws -> (width: Int32, height: Int32) {
        let d = try Demuxer(Demuxer.Options(url: path, timeoutSeconds: 10), interrupter: Interrupter())
        defer { d.close() }
        let v = d.streams[0]
        var read = 0
        while try d.read() != 0 || d.packet.pointee.flags & AV_PKT_FLAG_KEY == 0 {
            read += 1
            guard read < 1000 else { throw MediaError(.corrupt, "no video key frame in the first 1000 packets") }
        }
        let decoder = try VideoDecoder(codec: v.codec, extradata: v.extradata, strict: true)
        let packet = d.packet.pointee
        do {
            let picture = try decoder.decode(
                count: 1, sizes: { _ in Int(packet.size) },
                read: { _, buf in
                    buf.copyMemory(from: UnsafeRawBufferPointer(start: packet.data, count: Int(packet.size)))
                })
            return (Int32(picture.width), Int32(picture.height))
        } catch let e as MediaError {
            throw MediaError(.corrupt, "first key frame does not decode: \(e.message)", code: e.code)
        }
    }
}
