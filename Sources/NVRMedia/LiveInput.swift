import CFFmpeg
import NVRTime

/// A live source the recorder reads: libavformat's demuxer or the native RTSP client.
public protocol LiveInput: AnyObject {
    /// Video first, then optionally one audio stream.
    var streams: [StreamDescription] { get }
    var frameRate: Double { get }
    var bitRate: Int64 { get }
    /// Reads from the network and hands every packet that completes to `handler` (maybe none).
    func read(_ handler: (InputPacket) throws -> Void) throws
    func close()
    /// What the input cannot record and why (audio in an unsupported format, unusable
    /// parameter sets...), for the camera's status and `camera probe`.
    var notes: [String] { get }
    /// Reads the network at most once per `seconds` while bytes keep coming, whenever `when`
    /// says so (asked before each wait, not per packet). A stream no one watches live can wait
    /// a few frames: fewer wake-ups cost less CPU.
    func pace(seconds: Double, when: @escaping () -> Bool)
}

extension LiveInput {
    public var notes: [String] { [] }
    public func pace(seconds: Double, when: @escaping () -> Bool) {}
}

extension Demuxer: LiveInput {
    public var streams: [StreamDescription] { keptStreams.map(\.description) }

    public func read(_ handler: (InputPacket) throws -> Void) throws {
        let i = try read()
        let p = packet.pointee
        if i == 1, let x = audioConverter {
            // The converter's time base is one tick per sample; audio with no time is dropped.
            let t = p.pts == nvr_av_nopts_value() ? p.dts : p.pts
            guard t != nvr_av_nopts_value(),
                let time = audioTimebase.rescale(t, to: .rate(Int64(x.description.sampleRate)))
            else { return }
            try x.add(UnsafeRawBufferPointer(start: p.data, count: Int(max(p.size, 0))), time: time) {
                pts, duration, frame in
                try handler(InputPacket(stream: 1, pts: pts, dts: pts, duration: duration, isKey: true, data: frame))
            }
            return
        }
        try handler(
            InputPacket(
                stream: i, pts: p.pts, dts: p.dts, duration: p.duration, isKey: p.flags & 1 != 0,
                data: UnsafeRawBufferPointer(start: p.data, count: Int(max(p.size, 0)))))
    }
}
