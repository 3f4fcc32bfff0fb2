import NVRMedia
import Foundation
import NVRIndex

/// A plugin's card listing turned into timeslices on the NVR's clock.
///
/// Cameras stamp card files with their own wall clock, usually local time read as if it were
/// UTC, and that clock drifts. The rule (design/card.md): when the plugin also reports the
/// camera's clock read at listing time (`clock_local`), the offset is `clock_local − now`
/// (time zone and drift together) and a file's UTC start is `start_local − offset`. A camera
/// that knows its zone reports `start_utc`; when it also reports its clock as UTC
/// (`clock_utc`), the drift `clock_utc − now` is taken off too. Without a clock, the camera's
/// clock is assumed right (and local = UTC for `start_local`), and the listing says so.
public struct CardListing: Sendable {
    public struct Item: Sendable, Equatable {
        public var fileID: String
        public var name: String
        public var start90k: Int64
        public var end90k: Int64
        public var bytes: Int64
        /// False: listed (and readable) but not shown on the timeline nor backfilled.
        public var onTimeline = true
        /// The card, or the vendor's cloud (timeline only, never read).
        public var source = CardSource.card
    }
    public var items: [Item]
    /// Camera clock minus NVR clock, seconds (nil when the camera did not say).
    public var clockOffsetSeconds: Double?

    private struct Wire: Decodable {
        struct Media: Decodable {
            var id: String
            var name: String?
            var start_local: Double?
            var start_utc: Double?
            var duration: Double
            var size: Int64?
            var timeline: Bool?
            var source: String?
        }
        var clock_local: Double?
        var clock_utc: Double?
        var media: [Media]
    }

    /// Parses the plugin's JSON; `now90k` is the NVR's clock when the listing returned.
    public init(json: String, now90k: Int64) throws {
        let wire: Wire
        do { wire = try JSONDecoder().decode(Wire.self, from: Data(json.utf8)) } catch {
            throw PluginError("card listing is not the documented JSON: \(error)")
        }
        let now = Double(now90k) / 90_000
        let localOffset = wire.clock_local.map { $0 - now }
        let drift = wire.clock_utc.map { $0 - now }
        clockOffsetSeconds = localOffset ?? drift
        items = try wire.media.map { m in
            guard m.duration >= 0, m.duration < 7 * 86_400 else { throw PluginError("card file \(m.id): duration \(m.duration) s is not plausible") }
            guard let start = m.start_utc.map({ $0 - (drift ?? 0) }) ?? m.start_local.map({ $0 - (localOffset ?? 0) }) else {
                throw PluginError("card file \(m.id) has neither start_local nor start_utc")
            }
            guard let source = CardSource(rawValue: m.source ?? "card") else {
                throw PluginError("card file \(m.id): source must be card or cloud, not \(m.source ?? "")")
            }
            let s90k = Int64((start * 90_000).rounded())
            return Item(fileID: m.id, name: m.name ?? m.id, start90k: s90k, end90k: s90k + Int64((m.duration * 90_000).rounded()),
                        bytes: m.size ?? 0, onTimeline: m.timeline ?? true, source: source)
        }
    }

    func records(cameraID: Int64, seen90k: Int64) -> [CardSliceRecord] {
        items.map { CardSliceRecord(cameraID: cameraID, fileID: $0.fileID, name: $0.name, start90k: $0.start90k, end90k: $0.end90k,
                                 bytes: $0.bytes, seen90k: seen90k, onTimeline: $0.onTimeline, source: $0.source) }
    }
}

/// Reads a card file through the plugin in blocks, so libavformat's small reads and seeks
/// become a few HTTP Range requests, and counts what was fetched.
final class CardFileReader: RandomAccessSource {
    let size: Int64
    private let instance: PluginInstance
    private let fileID: String
    private let blockSize: Int64 = 1 << 20
    private var blocks: [(index: Int64, data: [UInt8])] = [] // most recent last
    private let maxBlocks = 8
    private let isCancelled: () -> Bool
    /// Bytes fetched from the camera so far.
    private(set) var fetched: Int64 = 0

    init(instance: PluginInstance, fileID: String, size: Int64, isCancelled: @escaping () -> Bool) {
        self.instance = instance
        self.fileID = fileID
        self.size = size
        self.isCancelled = isCancelled
    }

    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard offset < size, buffer.count > 0 else { return 0 }
        let index = offset / blockSize
        let block = try self.block(index)
        let within = Int(offset - index * blockSize)
        let n = min(buffer.count, block.count - within)
        guard n > 0 else { return 0 }
        block.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + within, byteCount: n) }
        return n
    }

    private func block(_ index: Int64) throws -> [UInt8] {
        if let i = blocks.firstIndex(where: { $0.index == index }) {
            let b = blocks.remove(at: i)
            blocks.append(b)
            return b.data
        }
        if isCancelled() { throw PluginError("stopped") }
        let start = index * blockSize
        let length = min(blockSize, size - start)
        var data: [UInt8] = []
        data.reserveCapacity(Int(length))
        let cancelled = isCancelled
        let complete = try instance.cardRead(id: fileID, offset: start, length: length) { chunk in
            data.append(contentsOf: chunk)
            return !cancelled()
        }
        if !complete { throw PluginError("stopped") }
        guard Int64(data.count) == length else {
            throw PluginError("card file \(fileID): asked for \(length) bytes at \(start), got \(data.count)")
        }
        fetched += length
        blocks.append((index, data))
        if blocks.count > maxBlocks { blocks.removeFirst() }
        return data
    }
}
