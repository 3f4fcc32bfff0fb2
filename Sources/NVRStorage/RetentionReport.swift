import Foundation
import Logging
import NVRIndex
import Synchronization

/// What a retention pass deleted (or, dry, would delete).
public struct RetentionReport: Sendable, Codable, Equatable {
    public struct Camera: Sendable, Codable, Equatable {
        public var camera: String
        public var segments: Int
        public var bytes: Int64
        public var oldestRemaining: String?
        public var oldestRemaining90k: Int64?
    }
    public var dryRun: Bool
    public var segments: Int
    public var bytes: Int64
    public var reasons: [String: Int]
    public var cameras: [Camera]
}
