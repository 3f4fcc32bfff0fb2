import CFFmpeg
import NVRTime

/// One compressed frame from a live input; `data` is borrowed for the handler call only.
public struct InputPacket {
    public var stream: Int
    public var pts: Int64
    public var dts: Int64
    public var duration: Int64
    public var isKey: Bool
    public var data: UnsafeRawBufferPointer

    public init(stream: Int, pts: Int64, dts: Int64, duration: Int64, isKey: Bool, data: UnsafeRawBufferPointer) {
        self.stream = stream
        self.pts = pts
        self.dts = dts
        self.duration = duration
        self.isKey = isKey
        self.data = data
    }
}
