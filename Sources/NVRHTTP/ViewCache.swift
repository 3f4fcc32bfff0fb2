import Crypto
import Foundation
import NVRIndex
import NVRMedia
import NVRPlayback

/// Recently built view.mp4 files. A player fetches one file as many Range requests; building
/// the moov of an hour takes milliseconds, so the same (camera, start, end) is built once and
/// kept for a few seconds. Entries expire quickly because segments being written still grow.
final class ViewCache: Sendable {
    struct View: Sendable {
        var result: RangeExport.Result
        var etag: String
    }
    private struct Key: Hashable, Sendable {
        var camera: Int64
        var start: Int64
        var end: Int64
        var speed: Int?
    }
    private let recent: RecentBuilds<Key, View>

    init(ttl: Double = 10, capacity: Int = 32) {
        recent = RecentBuilds(ttl: ttl, capacity: capacity)
    }

    /// `speed`: a Timelapse at that speed instead of every frame.
    func view(index: any IndexStore, storage: StorageLayout, camera: Int64, range: Range<Int64>, speed: Int? = nil)
        throws -> View
    {
        let key = Key(camera: camera, start: range.lowerBound, end: range.upperBound, speed: speed)
        return try recent.value(for: key) {
            let result =
                if let speed {
                    try Timelapse.build(
                        index: index, storage: storage, cameraID: camera, start: range.lowerBound,
                        end: range.upperBound, speed: speed)
                } else {
                    try RangeExport.build(
                        index: index, storage: storage, cameraID: camera, start: range.lowerBound,
                        end: range.upperBound)
                }
            return View(result: result, etag: Self.etag(result.mp4))
        }
    }

    /// A strong validator: the header (which holds every sample's size and offset) and the
    /// file ranges it points at. Same bytes ⇔ same tag, across restarts too.
    static func etag(_ mp4: VirtualMP4) -> String {
        var h = SHA256()
        for part in mp4.parts {
            switch part {
            case .bytes(let b): h.update(data: b)
            case .file(let path, let offset, let length): h.update(data: Array("\(path):\(offset):\(length);".utf8))
            }
        }
        return "\"" + h.finalize().prefix(12).map { String(format: "%02x", $0) }.joined() + "\""
    }
}
