import Foundation

/// What a camera keeps: everything, only event spans (with pre/post-roll), or nothing.
public enum RecordingMode: String, Sendable, CaseIterable, Codable {
    case continuous, events, off
}
