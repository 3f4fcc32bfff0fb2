import Foundation
import Logging
import NVRIndex
import Synchronization

/// Storage-wide retention settings (kept in the index, set with `nvr retention set`).
public struct RetentionSettings: Sendable, Equatable, Codable {
    /// Cap on all recordings together; nil = none.
    public var rootMaxBytes: Int64?
    /// Keep at least this share of the file system free (default 5 %).
    public var minFreePercent: Double = 5

    public static let rootMaxKey = "retention.root_max_bytes"
    public static let minFreeKey = "retention.min_free_percent"
}
