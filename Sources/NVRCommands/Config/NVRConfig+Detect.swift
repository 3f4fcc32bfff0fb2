import NVRDetect
import NVRRecorder
import NVRStorage
import TOMLKit

extension NVRConfig {
    static let detectKeys: Set<String> = ["runtime", "model", "labels", "channel_order", "threads"]

    /// [detect]: the object detector's runtime, model and labels (design/detection.md).
    static func parseDetect(_ t: TOMLTable?, source: String) throws -> DetectionOptions {
        var d = DetectionOptions()
        guard let t else { return d }
        for (key, path) in [
            ("runtime", \DetectionOptions.runtime), ("model", \DetectionOptions.model),
            ("labels", \DetectionOptions.labels),
        ] {
            guard let v = t[key] else { continue }
            guard let s = v.string, !s.isEmpty else {
                throw ConfigError("\(source): detect.\(key) must be a file path")
            }
            d[keyPath: path] = s
        }
        if d.model != nil && d.labels == nil {
            throw ConfigError("\(source): detect.model needs detect.labels (a file of label names, one per line)")
        }
        if let v = t["channel_order"] {
            guard let s = v.string, let o = DetectorModel.ChannelOrder(rawValue: s) else {
                throw ConfigError("\(source): detect.channel_order must be \"rgb\" or \"bgr\"")
            }
            d.channelOrder = o
        }
        if let v = t["threads"] {
            guard let n = v.int, (1...64).contains(n) else {
                throw ConfigError("\(source): detect.threads must be 1…64")
            }
            d.threads = n
        }
        return d
    }
}
