/// Why the segmenter last refused a frame, kept as a value on the packet path (no string is
/// built there) and put into words only when a camera's status is reported.
public enum DroppedFrames: Equatable, Sendable {
    /// Why a run ended early, so frames wait for the next key frame.
    public enum RunEnd: Equatable, Sendable {
        case timestampJump, frameTooLarge, noKeyFrame
    }

    case packetOfUnknownStream
    case frameTooLarge
    case timestampsOutOfRange
    /// Frames before the first key frame of a run, after `RunEnd` (nil: the first run).
    case waitingForKeyFrame(after: RunEnd?)

    public var description: String {
        switch self {
        case .packetOfUnknownStream: return "packets of a stream the camera did not announce"
        case .frameTooLarge: return "frames larger than any camera sends"
        case .timestampsOutOfRange: return "timestamps that do not fit the stream's time base"
        case .waitingForKeyFrame(nil): return "waiting for a key frame to start recording at"
        case .waitingForKeyFrame(.timestampJump?):
            return "the camera's timestamps jump (each jump ends the recording run; a new one waits for a key frame)"
        case .waitingForKeyFrame(.frameTooLarge?): return "a frame grew too large; waiting for the next key frame"
        case .waitingForKeyFrame(.noKeyFrame?): return "no key frame for too long; waiting for the next one"
        }
    }
}
