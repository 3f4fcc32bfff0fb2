import GRDB
import NVRTime

/// Where a camera-side recording lives: on the camera's memory card (readable, backfilled) or
/// in the vendor's cloud (shown on the timeline only).
public enum CardSource: String, Codable, Sendable { case card, cloud }
