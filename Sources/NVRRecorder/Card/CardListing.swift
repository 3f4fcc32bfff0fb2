import Foundation
import NVRIndex
import NVRPluginHost
import NVRTime

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

    // swift-format-ignore: AlwaysUseLowerCamelCase
    // The names are the listing's JSON keys.
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
        // A clock that is not a number is no clock (JSON cannot carry NaN, but 1e308 can be).
        let localOffset = wire.clock_local.flatMap { $0.isFinite ? $0 - now : nil }
        let drift = wire.clock_utc.flatMap { $0.isFinite ? $0 - now : nil }
        clockOffsetSeconds = localOffset ?? drift
        items = try wire.media.map { m in
            guard m.duration >= 0, m.duration < 7 * 86_400 else {
                throw PluginError("card file \(m.id): duration \(m.duration) s is not plausible")
            }
            guard let start = m.start_utc.map({ $0 - (drift ?? 0) }) ?? m.start_local.map({ $0 - (localOffset ?? 0) })
            else {
                throw PluginError("card file \(m.id) has neither start_local nor start_utc")
            }
            guard let source = CardSource(rawValue: m.source ?? "card") else {
                throw PluginError("card file \(m.id): source must be card or cloud, not \(m.source ?? "")")
            }
            // Camera clocks and cloud answers are outside input: a start that is not a time the
            // NVR supports refuses the listing rather than reaching any arithmetic.
            let s90k = Time90k.ticks(seconds: start)
            let e90k = Time90k.add(s90k, Time90k.ticks(seconds: m.duration))
            guard start.isFinite, Time90k.isSupported(s90k), Time90k.isSupported(e90k) else {
                throw PluginError("card file \(m.id): start \(start) s is not a plausible time")
            }
            guard (m.size ?? 0) >= 0 else { throw PluginError("card file \(m.id): size \(m.size ?? 0) is negative") }
            return Item(
                fileID: m.id, name: m.name ?? m.id, start90k: s90k, end90k: e90k,
                bytes: m.size ?? 0, onTimeline: m.timeline ?? true, source: source)
        }
    }

    func records(cameraID: Int64, seen90k: Int64) -> [CardSliceRecord] {
        items.map {
            CardSliceRecord(
                cameraID: cameraID, fileID: $0.fileID, name: $0.name, start90k: $0.start90k, end90k: $0.end90k,
                bytes: $0.bytes, seen90k: seen90k, onTimeline: $0.onTimeline, source: $0.source)
        }
    }
}
