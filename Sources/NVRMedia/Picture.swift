import CFFmpeg

/// A decoded picture, borrowed from the decoder that made it.
public struct Picture {
    let frame: UnsafeMutablePointer<AVFrame>
    init(_ frame: UnsafeMutablePointer<AVFrame>) { self.frame = frame }
    public var width: Int { Int(frame.pointee.width) }
    public var height: Int { Int(frame.pointee.height) }
}
