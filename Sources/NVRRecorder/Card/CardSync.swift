import Foundation
import Logging
import NVRIndex
import NVRMedia
import NVRPlayback
import NVRPluginHost
import NVRStorage
import NVRTime

/// Keeps a camera's card timeslices in the index and fills the NVR's recording gaps from the
/// card: lists the card through the plugin, then for every span of a card file that no
/// segment covers, reads just that part of the file (HTTP Range through the plugin) and
/// stream-copies it into ordinary segments marked `card`. Used by `nvr serve` (on connect and
/// every few minutes) and by `nvr card sync`.
public final class CardSync {
    public struct Report: Sendable, Equatable {
        public var files = 0
        public var clockOffsetSeconds: Double?
        public var gaps = 0
        public var segments = 0
        public var backfilled90k: Int64 = 0
        public var bytesFetched: Int64 = 0
        public var errors: [String] = []
    }

    /// Gaps shorter than this are left alone: a live run and the card footage that continues it
    /// meet at a key frame, which leaves slivers up to a GOP long.
    public static let minimumGap90k: Int64 = 2 * 90_000
    /// A gap that starts where card footage ends leaves no such sliver when filled (the next
    /// card file continues the last one): it is filled from a second, the timeline's join
    /// tolerance. Else the end of an outage that falls just after a chapter boundary stays a
    /// hole: the chapter before is backfilled at the first sync, the one holding the rest is
    /// still being written then, and what is left is too short for `minimumGap90k`.
    public static let minimumGapAfterCard90k: Int64 = Timeline.joinTolerance90k

    private let camera: CameraRecord
    private let index: any IndexStore
    private let writer: IndexWriter
    private let storage: StorageLayout
    private let segmentSeconds: Int
    private let logger: Logger

    public init(camera: CameraRecord, writer: IndexWriter, storage: StorageLayout, segmentSeconds: Int, logger: Logger)
    {
        self.camera = camera
        self.index = writer.index
        self.writer = writer
        self.storage = storage
        self.segmentSeconds = segmentSeconds
        self.logger = logger
    }

    /// Lists the card and stores its slices (replacing the previous listing).
    @discardableResult
    public func refresh(_ instance: PluginInstance) throws -> CardListing {
        let json = try instance.cardList()
        let now = Time90k.now()
        let listing = try CardListing(json: json, now90k: now)
        try index.replaceCardSlices(cameraID: camera.id!, with: listing.records(cameraID: camera.id!, seen90k: now))
        return listing
    }

    /// Lists the card, then (when `backfill`) fills gaps inside `window` from it.
    public func run(
        _ instance: PluginInstance, window: Range<Int64>, backfill: Bool,
        isCancelled: @escaping () -> Bool = { false }, progress: ((Report) -> Void)? = nil
    ) throws -> Report {
        let listing = try refresh(instance)
        var report = Report(files: listing.items.count, clockOffsetSeconds: listing.clockOffsetSeconds)
        guard backfill, instance.offersCard else { return report }
        for item in listing.items
        where item.onTimeline && item.source == .card && item.end90k > window.lowerBound
            && item.start90k < window.upperBound
        {
            if isCancelled() { break }
            let span = max(item.start90k, window.lowerBound)..<min(item.end90k, window.upperBound)
            for gap in try gaps(in: span) {
                if isCancelled() { break }
                report.gaps += 1
                do {
                    let r = try copy(instance, item: item, gap: gap, isCancelled: isCancelled)
                    report.segments += r.segments
                    report.backfilled90k += r.duration90k
                    report.bytesFetched += r.fetched
                    logger.info(
                        "camera \(camera.name): backfilled \(String(format: "%.1f", Double(r.duration90k) / 90_000)) s from card file \(item.name) (\(Time90k.rfc3339(gap.lowerBound)) – \(Time90k.rfc3339(gap.upperBound)), \(r.fetched / 1024) KB of \(item.bytes / 1024) KB read)"
                    )
                } catch {
                    report.errors.append("\(item.name): \(error)")
                    logger.warning("camera \(camera.name): backfill from card file \(item.name) failed: \(error)")
                }
                progress?(report)
            }
        }
        return report
    }

    /// Parts of `span` no segment covers, at least `minimumGap90k` long. A segment still being
    /// written counts as reaching a little past its row (the row's duration is refreshed every
    /// few seconds and lags the file), up to now; a *writing* row left behind by a failure
    /// covers no more than that, never everything up to now.
    ///
    /// Never a gap: what was deleted (by a user or retention: the card still has it, and it
    /// must stay deleted), nor what retention would delete at once (older than the camera's
    /// continuous-footage age limit, or older than its oldest segment when it is at its size cap).
    func gaps(in span: Range<Int64>) throws -> [Range<Int64>] {
        let now = Time90k.now()
        guard let id = camera.id else { return [] }
        var span = span
        let retention = try index.retention(cameraID: id)
        if let days = retention?.continuousDays, days > 0, days.isFinite {
            let oldest = Time90k.subtract(now, Int64(min(days, 36_600) * 86_400 * 90_000))
            guard oldest < span.upperBound else { return [] }
            span = max(span.lowerBound, oldest)..<span.upperBound
        }
        // A camera at its size cap keeps its newest footage: what the card has from before
        // its oldest segment would go at the next retention run, so it is not fetched.
        if let cap = retention?.maxBytes, case let stored = try index.storageSummary(cameraID: id), stored.bytes >= cap,
            let oldest = stored.oldest90k
        {
            guard oldest < span.upperBound else { return [] }
            span = max(span.lowerBound, oldest)..<span.upperBound
        }
        // From a second before the span: card footage that ends just before it (the previous
        // file's, where this one's listed start is a little late) still counts as "after card".
        let segments = try index.segments(
            cameraID: id, start90k: span.lowerBound - Self.minimumGapAfterCard90k, end90k: span.upperBound
        )
        .filter { $0.state != .deleting }
        var covered =
            segments
            .map {
                $0
                    .start90k..<($0.state == .writing
                    ? max($0.end90k, min(now, $0.end90k + Self.writingLag90k)) : $0.end90k)
            }
        covered += try index.deletedRanges(cameraID: id, start90k: span.lowerBound, end90k: span.upperBound)
        // Card footage ending at (or, with the next file's listed start, just before) a gap.
        let cardEnds = segments.filter { $0.source == "card" && $0.state == .complete }.map(\.end90k)
        func afterCard(_ gap: Range<Int64>) -> Bool {
            cardEnds.contains { $0 <= gap.lowerBound && gap.lowerBound - $0 < Self.minimumGapAfterCard90k }
        }
        return
            (span.gaps(covered: covered, minimum: Self.minimumGap90k)
            + span.gaps(covered: covered, minimum: Self.minimumGapAfterCard90k).filter {
                $0.count < Self.minimumGap90k && afterCard($0)
            }).sorted { $0.lowerBound < $1.lowerBound }
    }

    /// How far past its row a segment being written may reach: its progress interval (5 s)
    /// and a fragment, with room to spare.
    static let writingLag90k: Int64 = 15 * 90_000

    /// start + media − first, or nil if it leaves the supported times.
    static func checked(_ start: Int64, plus media: Int64, minus first: Int64) -> Int64? {
        let t = Time90k.subtract(Time90k.add(start, media), first)
        return Time90k.isSupported(t) ? t : nil
    }

    /// A key frame this much before a gap's start still opens it: the footage before the gap
    /// ends where the segmenter's rounding puts it, and the next card file's first frame may
    /// sit a few ticks earlier. (Playback shortens the sample before a small overlap.)
    static let startSlack90k: Int64 = 4_500

    /// Stream-copies the part of a card file inside `gap` into segments: from the first key
    /// frame at or after the gap's start (within `startSlack90k`) to the last frame that ends by the gap's end.
    private func copy(
        _ instance: PluginInstance, item: CardListing.Item, gap: Range<Int64>,
        isCancelled: @escaping () -> Bool
    ) throws -> (segments: Int, duration90k: Int64, fetched: Int64) {
        let reader = CardFileReader(instance: instance, fileID: item.fileID, size: item.bytes, isCancelled: isCancelled)
        let demuxer = try Demuxer(source: reader, name: "card file \(item.name)", interrupter: Interrupter())
        defer { demuxer.close() }
        let streams = demuxer.streams
        let first = demuxer.videoStartTime90k
        try demuxer.seekVideo(to: Time90k.add(first, Time90k.subtract(gap.lowerBound, item.start90k)))
        var settings = Segmenter.Settings(segmentSeconds: segmentSeconds)
        settings.source = "card"
        let segmenter = Segmenter(camera: camera, storage: storage, writer: writer, settings: settings, logger: logger)
        try segmenter.begin(streams: streams)
        let timebases = streams.map { Timebase($0.timebaseNum, $0.timebaseDen) }
        var started = false
        var finished = false
        var firstTime: Int64 = 0
        var lastEnd: Int64 = 0
        var lastVideoTime: Int64?
        defer { try? segmenter.end() }
        while !isCancelled() && !finished {
            do {
                try demuxer.read { p in
                    let i = p.stream
                    let raw = p.dts != .min ? p.dts : p.pts
                    // A timestamp that does not fit on the NVR's clock ends the copy there.
                    guard raw != .min else { return }
                    guard let media = timebases[i].to90k(raw),
                        let t = Self.checked(item.start90k, plus: media, minus: first)
                    else {
                        finished = true
                        return
                    }
                    if i == 0 {
                        if !started {
                            guard p.isKey, t >= gap.lowerBound - Self.startSlack90k else { return }
                            started = true
                            firstTime = t
                        }
                        // A frame lasts until the next; stop before one would run past the gap.
                        let frame =
                            p.duration > 0
                            ? (timebases[0].to90k(p.duration) ?? 3000) : lastVideoTime.map { max(t - $0, 1) } ?? 3000
                        if Time90k.add(t, frame) > gap.upperBound {
                            finished = true
                            return
                        }
                        lastVideoTime = t
                        lastEnd = t + frame
                    } else {
                        guard started, t < lastEnd else { return }
                    }
                    try segmenter.append(
                        stream: i, pts: p.pts, dts: p.dts, duration: p.duration, isKey: p.isKey, data: p.data,
                        capture90k: t)
                }
            } catch let e as MediaError where e.isEndOfFile {
                break
            }
        }
        try segmenter.end()
        _ = writer.flush(applied: 30)  // the next gap is found from the index
        return (
            Int(segmenter.counters.segments.load(ordering: .relaxed)), started ? lastEnd - firstTime : 0, reader.fetched
        )
    }
}
