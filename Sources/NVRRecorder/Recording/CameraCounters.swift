import Synchronization

/// A camera's running totals for /metrics. The Recorder keeps one per camera name, so they
/// survive the camera's session being restarted by a change; the recording path only adds to
/// atomics (no lock, no allocation per packet).
public final class CameraCounters: Sendable {
    /// Video frames received from the camera.
    public let frames = Atomic<Int64>(0)
    /// Bytes received from the camera, every stream.
    public let bytes = Atomic<Int64>(0)
    /// Frames received while recording that could not be recorded (no key frame yet to start
    /// at, timestamps out of range, larger than any camera sends).
    public let droppedFrames = Atomic<Int64>(0)
    /// Times the camera started streaming (the first connection included).
    public let connections = Atomic<Int64>(0)
    /// Bytes read from the camera's card to fill recording gaps.
    public let cardBackfillBytes = Atomic<Int64>(0)
    /// Segments completed.
    public let segments = Atomic<Int64>(0)

    public init() {}
}
