import Foundation
import NVRMedia

/// What `nvr camera probe` reports about a live stream.
public struct ProbeResult: Sendable, Codable {
    public var url: String
    public var video: String
    public var codec: String
    public var width: Int
    public var height: Int
    public var fps: Double?
    public var bitRate: Int64?
    public var audio: String?
    /// What the NVR would not record of the stream, and why.
    public var notes: [String]?
}
