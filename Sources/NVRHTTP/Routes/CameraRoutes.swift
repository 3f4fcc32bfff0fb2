import Foundation
import HTTPTypes
import Hummingbird
import NVRCameras
import NVRIndex
import NVRPlayback
import NVRPluginHost
import NVRRecorder
import NVRTime

/// Cameras as a viewer sees them: the list, one camera, its days, timeline and recordings.
struct CameraRoutes: IndexedRoutes {
    let index: any IndexStore
    let recorder: Recorder?

    func register(on router: Router<NVRContext>) {
        router.get("/api/cameras") { _, c in
            let who = try identity(c)
            return try await offload { [index, recorder] in
                try JSON.response([
                    "cameras": try index.cameras().filter { who.mayView(camera: $0.name) }.map {
                        try Self.cameraJSON(index: index, recorder: recorder, $0)
                    }
                ])
            }
        }
        router.get("/api/cameras/{name}") { _, c in
            let cam = try await camera(c)
            return try await offload { [index, recorder] in
                try JSON.response(try Self.cameraJSON(index: index, recorder: recorder, cam))
            }
        }
        router.get("/api/cameras/{name}/days") { r, c in try await days(r, try await camera(c)) }
        router.get("/api/cameras/{name}/timeline") { r, c in try await timeline(r, try await camera(c)) }
        router.get("/api/cameras/{name}/recordings") { r, c in try await recordings(r, try await camera(c)) }
        router.get("/api/cameras/{name}/motion") { _, c in
            let cam = try await camera(c)
            return try JSON.response(
                MotionJSON(camera: cam.name, look: recorder?.session(named: cam.name)?.motion.read()))
        }
    }

    /// GET /api/cameras/{name}/motion: what the motion detector saw in its newest look (null
    /// until it has looked since someone asked, and when its newest look is over 2 s old: it
    /// stopped, or motion detection does not run).
    struct MotionJSON: Encodable {
        var camera: String
        var look: MotionMonitor.Look?
        enum CodingKeys: String, CodingKey { case camera, look }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(camera, forKey: .camera)
            try c.encode(look, forKey: .look)  // null, not left out
        }
    }

    // MARK: cameras

    struct StreamJSON: Encodable {
        var codec: String
        var rfc6381: String
        var width: Int?
        var height: Int?
        var sampleRate: Int?
        var channels: Int?
    }
    struct CameraJSON: Encodable {
        var name: String, plugin: String, enabled: Bool
        var state: String, reason: String?, since: String?, since90k: Int64?
        var lastFrame: String?, lastFrame90k: Int64?
        var video: StreamJSON?, audio: StreamJSON?
        var fps: Double?, bitRate: Int64?
        var bytes: Int64, segments: Int
        var oldest: String?, oldest90k: Int64?, newest: String?, newest90k: Int64?
        var mode: String?, motion: String?
        /// Object detection: absent when off; the labels; "loading the model"; "failed: why".
        var detection: String?
        /// What the camera reports through its plugin (battery, card, stream...).
        var camera: JSONValue?
        /// What of the camera's streams is not recorded, and why.
        var notes: [String]?
    }

    /// A camera as the API lists it (also the answer to a change).
    static func cameraJSON(index: any IndexStore, recorder: Recorder?, _ c: CameraRecord) throws -> CameraJSON {
        let o = try CameraOverview.load(c, index: index, recorder: recorder)
        func stream(_ e: SampleEntryRecord?) -> StreamJSON? {
            guard let e else { return nil }
            let video = e.width > 0
            return StreamJSON(
                codec: e.codec, rfc6381: e.rfc6381, width: video ? e.width : nil, height: video ? e.height : nil,
                sampleRate: video ? nil : e.sampleRate, channels: video ? nil : e.channels)
        }
        return CameraJSON(
            name: c.name, plugin: c.plugin, enabled: c.enabled, state: o.state ?? "stopped", reason: o.reason,
            since: o.since90k.map(Time90k.rfc3339), since90k: o.since90k,
            lastFrame: o.lastFrame90k.map(Time90k.rfc3339), lastFrame90k: o.lastFrame90k,
            video: stream(o.video), audio: stream(o.audio), fps: o.fps, bitRate: o.bitRate,
            bytes: o.storage.bytes, segments: o.storage.segments,
            oldest: o.storage.oldest90k.map(Time90k.rfc3339), oldest90k: o.storage.oldest90k,
            newest: o.storage.newest90k.map(Time90k.rfc3339), newest90k: o.storage.newest90k,
            mode: o.mode, motion: o.motion, detection: o.detection,
            camera: o.cameraStatus.flatMap { try? JSONValue(text: $0) }, notes: o.notes)
    }

    // MARK: days, timeline, recordings

    struct DayJSON: Encodable {
        var date: String
        var start: String
        var start90k: Int64
        var end: String
        var end90k: Int64
        var hours: Double
        /// Footage the NVR has (recorded live or backfilled from a card).
        var recordedSeconds: Double
        /// Footage only on the camera's card.
        var cardOnlySeconds: Double
    }
    struct DaysJSON: Encodable {
        var camera: String
        var month: String
        var tz: String
        var days: [DayJSON]
    }

    func days(_ r: Request, _ cam: CameraRecord) async throws -> Response {
        let q = Query(request: r)
        let zone = try q.days()
        guard let month = q.string("month") else { throw APIError.badRequest("month is required, like 2026-11") }
        let all: [(date: String, range: Range<Int64>)]
        do { all = try zone.month(month) } catch { throw APIError.badRequest("\(error)") }
        return try await offload {
            let out = try Timeline.recordedDays(index: index, cameraID: cam.id!, month: all).map { d in
                DayJSON(
                    date: d.date, start: zone.format(d.range.lowerBound), start90k: d.range.lowerBound,
                    end: zone.format(d.range.upperBound), end90k: d.range.upperBound,
                    hours: Double(Time90k.length(d.range)) / 90_000 / 3600,
                    recordedSeconds: Double(d.slices.filter { !$0.onCameraOnly }.reduce(0) { $0 + $1.duration90k })
                        / 90_000,
                    cardOnlySeconds: Double(d.slices.filter(\.onCameraOnly).reduce(0) { $0 + $1.duration90k }) / 90_000)
            }
            return try JSON.response(DaysJSON(camera: cam.name, month: month, tz: zone.name, days: out))
        }
    }

    struct SliceJSON: Encodable {
        var start: String, end: String, start90k: Int64, end90k: Int64
        var kind: String, source: String, segments: Int, bytes: Int64
        /// "nvr": playable here (view.mp4); "camera": only on the camera's card so far.
        var location: String
    }
    struct TimelineJSON: Encodable {
        var camera: String
        var tz: String?
        var date: String?
        var start: String
        var start90k: Int64
        var end: String
        var end90k: Int64
        var slices: [SliceJSON]
    }

    func timeline(_ r: Request, _ cam: CameraRecord) async throws -> Response {
        let q = Query(request: r)
        let range: Range<Int64>
        var date = q.string("date")
        var tz: String?
        if q.string("start") != nil || q.string("end") != nil {
            guard date == nil else { throw APIError.badRequest("give date= or start= and end=, not both") }
            range = try q.range()
        } else {
            // A date, or today: the local day in tz.
            let zone = try q.days()
            do { range = try date.map { try zone.day($0) } ?? zone.today() } catch {
                throw APIError.badRequest("\(error)")
            }
            tz = zone.name
            date = String(zone.format(range.lowerBound).prefix(10))
        }
        return try await offload { [tz, date] in
            let slices = try Timeline.all(index: index, cameraID: cam.id!, range: range).map {
                SliceJSON(
                    start: Time90k.rfc3339($0.start90k), end: Time90k.rfc3339($0.end90k), start90k: $0.start90k,
                    end90k: $0.end90k,
                    kind: $0.kind.rawValue, source: $0.source.rawValue, segments: $0.segments, bytes: $0.bytes,
                    location: !$0.onCameraOnly ? "nvr" : $0.source == .cloud ? "cloud" : "camera")
            }
            return try JSON.response(
                TimelineJSON(
                    camera: cam.name, tz: tz, date: date, start: Time90k.rfc3339(range.lowerBound),
                    start90k: range.lowerBound,
                    end: Time90k.rfc3339(range.upperBound), end90k: range.upperBound, slices: slices))
        }
    }

    struct SegmentJSON: Encodable {
        var id: Int64, run: Int64, start: String, start90k: Int64, end: String, end90k: Int64
        var bytes: Int64, frames: Int, keyFrames: Int, state: String, source: String, hasEvent: Bool
        var video: String, audio: String?
    }

    func recordings(_ r: Request, _ cam: CameraRecord) async throws -> Response {
        let range = try Query(request: r).range()
        return try await offload {
            var entries: [Int64: String] = [:]
            func codec(_ id: Int64) throws -> String {
                if let c = entries[id] { return c }
                let c = try index.sampleEntry(id: id)?.rfc6381 ?? "unknown"
                entries[id] = c
                return c
            }
            let segs = try index.segments(cameraID: cam.id!, start90k: range.lowerBound, end90k: range.upperBound)
                .filter { $0.end90k > range.lowerBound || $0.state == .writing }
            let out = try segs.map { s in
                SegmentJSON(
                    id: s.id!, run: s.runID, start: Time90k.rfc3339(s.start90k), start90k: s.start90k,
                    end: Time90k.rfc3339(s.end90k), end90k: s.end90k,
                    bytes: s.bytes, frames: s.frames, keyFrames: s.keyFrames, state: s.state.rawValue, source: s.source,
                    hasEvent: s.hasEvent,
                    video: try codec(s.videoEntryID), audio: try s.audioEntryID.map(codec))
            }
            struct Out: Encodable {
                var camera: String
                var start: String
                var start90k: Int64
                var end: String
                var end90k: Int64
                var recordings: [SegmentJSON]
            }
            return try JSON.response(
                Out(
                    camera: cam.name, start: Time90k.rfc3339(range.lowerBound), start90k: range.lowerBound,
                    end: Time90k.rfc3339(range.upperBound), end90k: range.upperBound, recordings: out))
        }
    }
}
