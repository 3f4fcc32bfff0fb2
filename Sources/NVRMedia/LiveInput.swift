/// One compressed frame from a live input; `data` is borrowed for the handler call only.
public struct InputPacket {
    public var stream: Int
    public var pts: Int64
    public var dts: Int64
    public var duration: Int64
    public var isKey: Bool
    public var data: UnsafeRawBufferPointer
}

/// A live source the recorder reads: libavformat's demuxer or the native RTSP client.
public protocol LiveInput: AnyObject {
    /// Video first, then optionally one audio stream.
    var streams: [StreamDescription] { get }
    var frameRate: Double { get }
    var bitRate: Int64 { get }
    /// Reads from the network and hands every packet that completes to `handler` (maybe none).
    func read(_ handler: (InputPacket) throws -> Void) throws
    func close()
}

extension Demuxer: LiveInput {
    public var streams: [StreamDescription] { keptStreams.map(\.description) }

    public func read(_ handler: (InputPacket) throws -> Void) throws {
        let i = try read()
        let p = packet.pointee
        try handler(InputPacket(stream: i, pts: p.pts, dts: p.dts, duration: p.duration, isKey: p.flags & 1 != 0,
                                data: UnsafeRawBufferPointer(start: p.data, count: Int(p.size))))
    }
}
