import Foundation
import NVRIndex

/// Where things live under the storage root: the recorder writes there, playback reads.
/// (Making the folders is the storage layer's: `prepare()` in NVRStorage.)
public struct StorageLayout: Sendable {
    public let root: String
    /// Other recorder nodes' roots as mounted here (shared by every copy of this layout).
    public let nodes = NodeRoots()

    public init(root: String) {
        self.root = URL(fileURLWithPath: root).standardizedFileURL.path
    }

    public var indexPath: String { root + "/index.sqlite" }
    /// The index writer's journal: rows an index on PostgreSQL could not take yet (IndexJournal).
    public var indexJournalPath: String { root + "/index.journal" }
    public var recordingsDir: String { root + "/recordings" }

    /// Relative path of a new segment: recordings/<camera>/<YYYY>/<MM>/<DD>/<camera>-<stamp>Z-r<run>-<seq>.mp4
    /// (dates in UTC, so a DST change never makes two files share a name).
    public func segmentPath(camera: String, start90k: Int64, runID: Int64, seq: Int) -> String {
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = TimeZone(identifier: "UTC")!
        let c = cal.dateComponents([.year, .month, .day, .hour, .minute, .second], from: Time90k.date(start90k))
        let day = String(format: "%04d/%02d/%02d", c.year!, c.month!, c.day!)
        let stamp = String(
            format: "%04d%02d%02dT%02d%02d%02d", c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!)
        return "recordings/\(camera)/\(day)/\(camera)-\(stamp)Z-r\(runID)-\(seq).mp4"
    }

    public func absolute(_ relative: String) -> String { root + "/" + relative }

    /// A segment's file: under this root, under the root of the node that recorded it, or a
    /// copy fetched from that node (NodeRoots).
    public func file(of segment: SegmentRecord) throws -> String {
        try nodes.file(of: segment, own: root, fetch: true)
    }

    /// A segment's file where this machine sees it, never fetched (to delete it).
    public func localFile(of segment: SegmentRecord) throws -> String {
        try nodes.file(of: segment, own: root, fetch: false)
    }

    /// Relative folder of a camera's segments starting on the UTC day of `time90k`.
    public func dayFolder(camera: String, time90k: Int64) -> String {
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = TimeZone(identifier: "UTC")!
        let c = cal.dateComponents([.year, .month, .day], from: Time90k.date(time90k))
        return String(format: "recordings/%@/%04d/%02d/%02d", camera, c.year ?? 0, c.month ?? 0, c.day ?? 0)
    }

    /// Camera names become folder names: keep them to letters, digits, '-', '_' and '.'.
    public static func isValidCameraName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64 && name.first != "."
            && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }
    }
}
