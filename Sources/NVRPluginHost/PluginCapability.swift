import CNVRPlugin
import Foundation
import Synchronization

public enum PluginCapability {
    public static let all: [(UInt64, String)] = [
        (UInt64(NVR_CAP_LIVE_URL), "live-url"), (UInt64(NVR_CAP_LIVE_PUSH), "live-push"),
        (UInt64(NVR_CAP_EVENTS), "events"), (UInt64(NVR_CAP_CARD_LIST), "card-list"),
        (UInt64(NVR_CAP_CARD_DOWNLOAD), "card-download"), (UInt64(NVR_CAP_SNAPSHOT), "snapshot"),
        (UInt64(NVR_CAP_DISCOVERY), "discovery"), (UInt64(NVR_CAP_CONTROL), "control"),
        (UInt64(NVR_CAP_SUBSTREAM), "substream"), (UInt64(NVR_CAP_PTZ), "ptz"), (UInt64(NVR_CAP_TALK), "talk"),
    ]
    public static func names(_ bits: UInt64) -> [String] { all.filter { bits & $0.0 != 0 }.map(\.1) }
}
