/// Notices a live connection that stopped yielding usable video while bytes still arrive:
/// every RTP packet broken, a stream that never sends a key frame. Fed from inside each read
/// of the session thread and checked after it; the session reconnects with the reason given.
struct FrameWatchdog {
    /// Longest time without any video frame.
    static let frameTimeout: UInt64 = 10_000_000_000
    /// Longest time without a key frame once frames arrive (cameras' GOPs are seconds long;
    /// nothing can be recorded without one).
    static let keyFrameTimeout: UInt64 = 60_000_000_000

    private(set) var frames = 0
    private var framesAtCheck = 0
    private var keySinceCheck = false
    private var lastFrame: UInt64
    private var lastKey: UInt64

    init(now: UInt64) {
        lastFrame = now
        lastKey = now
    }

    /// A video frame was read.
    mutating func saw(isKey: Bool) {
        frames += 1
        if isKey { keySinceCheck = true }
    }

    /// Why to give up on the connection, or nil while it is healthy.
    mutating func check(now: UInt64) -> String? {
        if frames != framesAtCheck {
            lastFrame = now
            framesAtCheck = frames
        }
        if keySinceCheck {
            lastKey = now
            keySinceCheck = false
        }
        if now &- lastFrame > Self.frameTimeout {
            return
                "no usable video for \(Self.frameTimeout / 1_000_000_000) s (data arrives but no frame could be assembled)"
        }
        if now &- lastKey > Self.keyFrameTimeout {
            return "no key frame for \(Self.keyFrameTimeout / 1_000_000_000) s (nothing can be recorded without one)"
        }
        return nil
    }
}
