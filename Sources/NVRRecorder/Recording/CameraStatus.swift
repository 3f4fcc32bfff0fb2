import CNVRPlugin
import Foundation
import Logging
import NVRIndex
import NVRMedia
import NVRTime
import Synchronization

/// What a camera is doing, for logs, the CLI and the API.
public struct CameraStatus: Sendable, Equatable {
    /// `streaming`: connected, and what it sends is recorded (or, in mode off, shown live);
    /// `stalled`: connected, frames arrive, but most cannot be recorded (the reason says why,
    /// `lastFrame90k` when the last one was).
    public enum State: String, Sendable { case stopped, connecting, streaming, stalled, lost, failed }
    public var state: State = .stopped
    public var reason: String?
    public var since90k: Int64 = Time90k.now()
    public var lastFrame90k: Int64?
    public var video: String?
    public var audio: String?
    public var fps: Double?
    public var bitRate: Int64?
    /// The recording mode in force (continuous, events, off).
    public var mode: String?
    /// Where motion is looked for: off, main stream (key frames / every frame), sub-stream.
    public var motion: String?
    /// Object detection: nil when off; the labels; "loading the model"; "failed: why".
    public var detection: String?
    /// What of the camera's streams is not recorded, and why (unsupported audio...).
    public var notes: [String]?
}
