import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NVRAccess
import NVRIndex
import NVRPlayback
import NVRPluginHost
import NVRRecorder
import NVRStorage
import NVRTime
import NVRWorker

/// A camera's memory card: what is on it (as last listed), a sync now, and one file downloaded
/// as it is. What `nvr card list`, `nvr card sync` and `nvr card get` do, from the page.
struct CardRoutes: IndexedRoutes {
    let index: any IndexStore
    let storage: StorageLayout
    let plugins: PluginHost
    let recorder: Recorder?
    let audit: AuditLog
    /// Cameras whose card is being synced (the recorder's, shared with its own periodic syncs;
    /// without a recorder, this server's requests only): one sync per camera at a time.
    let syncing: OneAtATime

    init(index: any IndexStore, storage: StorageLayout, plugins: PluginHost, recorder: Recorder?, audit: AuditLog) {
        self.index = index
        self.storage = storage
        self.plugins = plugins
        self.recorder = recorder
        self.audit = audit
        syncing = recorder?.cardSyncs ?? OneAtATime()
    }

    func register(on router: Router<NVRContext>) {
        router.get("/api/cameras/{name}/card") { r, c in try await list(r, c) }
        router.post("/api/cameras/{name}/card/sync") { r, c in try await sync(r, c) }
        router.get("/api/cameras/{name}/card/file") { r, c in try await download(r, c) }
    }

    struct ListJSON: Encodable {
        var camera: String
        /// The camera's plugin can list a card (false: `videos` is always empty).
        var hasCard: Bool
        var videos: [CardVideo]
    }

    /// GET …/card?start=&end=: the videos overlapping the range, as the last sync listed them.
    func list(_ r: Request, _ c: NVRContext) async throws -> Response {
        let cam = try await camera(c)
        let range = try Query(request: r).range()
        let hasCard = (try? plugins.plugin(named: cam.plugin))?.listsCard ?? false
        let videos = try await offload { [index] in
            try CardVideo.listed(index: index, cameraID: cam.id ?? 0, range: range)
        }
        return try JSON.response(ListJSON(camera: cam.name, hasCard: hasCard, videos: videos))
    }

    /// The camera's plugin, started with its stored options for one job, or 409 saying why not.
    func instance(_ cam: CameraRecord, needs: (PluginInstance) -> Bool) throws -> PluginInstance {
        let made: PluginInstance
        do {
            made = try PluginInstance(
                plugin: try plugins.plugin(named: cam.plugin), configJSON: cam.config, callbacks: SilentCallbacks())
        } catch {
            throw APIError(.conflict, "plugin_failed", "camera \(cam.name)'s plugin '\(cam.plugin)': \(error)")
        }
        guard needs(made) else {
            throw APIError(
                .conflict, "no_card", "camera \(cam.name)'s plugin '\(cam.plugin)' cannot read a memory card")
        }
        return made
    }

    /// POST …/card/sync[?start=&end=&listOnly=true] (admin): lists the card now and backfills
    /// the gaps of the range (default: the last card.backfill_hours) from it, as `nvr card sync`.
    func sync(_ r: Request, _ c: NVRContext) async throws -> Response {
        let who = try admin(c)
        let cam = try await camera(c)
        let q = Query(request: r)
        let listOnly = try q.flag("listOnly")
        let now = Time90k.now()
        let hours = Int64(recorder?.options.cardBackfillHours ?? 24)
        let start = try q.time("start") ?? now - hours * 3600 * 90_000
        let end = try q.time("end") ?? now
        guard start < end else { throw APIError.badRequest("end must be after start") }
        let claim = "card-\(cam.id ?? 0)"
        guard syncing.claim(claim) else {
            throw APIError(
                .conflict, "busy",
                "a sync of \(cam.name)'s card is running (the server's own, or another); try again when it ends")
        }
        defer { syncing.release(claim) }
        let segmentSeconds = recorder?.options.segmentSeconds ?? 60
        let summary = try await offload { [index, storage] in
            let plugin = try instance(cam, needs: \.offersCardList)
            var logger = Logger(label: "nvr")
            logger.logLevel = .warning
            let writer = IndexWriter(index: index, logger: logger)
            defer { writer.close() }
            do {
                let report = try CardSync(
                    camera: cam, writer: writer, storage: storage, segmentSeconds: segmentSeconds, logger: logger
                ).run(plugin, window: start..<end, backfill: !listOnly)
                return CardSyncSummary(camera: cam.name, report)
            } catch let e as PluginError {
                // The camera did not answer, or answered what is not a card listing (the
                // server's own failures, the index's, stay 500s).
                throw APIError(.badGateway, "card_failed", "listing \(cam.name)'s card failed: \(e)")
            }
        }
        audit.record(
            who.name, "card.sync", target: cam.name, detail: ["segments": String(summary.segments)],
            address: c.remoteAddress)
        return try JSON.response(summary)
    }

    /// GET …/card/file?file=ID (admin): one file of the card's last listing, as the camera has it,
    /// streamed while it is read (no Content-Length: the card's listed size is the camera's word).
    /// A client that leaves ends the read (CardFileStream).
    func download(_ r: Request, _ c: NVRContext) async throws -> Response {
        let who = try admin(c)
        let cam = try await camera(c)
        guard let id = Query(request: r).string("file") else { throw APIError.badRequest("file is required") }
        let listed = try await offload { [index] in
            try index.cardSlices(
                cameraID: cam.id ?? 0, start90k: Time90k.supported.lowerBound, end90k: Time90k.supported.upperBound,
                includeOffTimeline: true
            ).first { $0.fileID == id }
        }
        guard let listed, listed.source == .card else {
            throw APIError.notFound("'\(id.prefix(64))' is not a file of \(cam.name)'s card as last listed")
        }
        let plugin = try await offload { try instance(cam, needs: \.offersCard) }
        var headers: HTTPFields = [.contentType: "application/octet-stream", .cacheControl: "private, no-store"]
        headers[HTTPField.Name("Content-Disposition")!] = "attachment; filename=\"\(Self.safeName(listed.name))\""
        // HEAD: what a GET would answer, without reading the card.
        if r.method == .head { return Response(status: .ok, headers: headers) }
        let stream = CardFileStream(plugin: plugin, file: id)
        // The first bytes (or the camera's refusal) before the answer's status is chosen.
        let first: ByteBuffer?
        do { first = try await stream.next() } catch {
            throw APIError(.badGateway, "card_read_failed", "reading \(listed.name) from \(cam.name): \(error)")
        }
        audit.record(who.name, "card.get", target: cam.name, detail: ["file": listed.name], address: c.remoteAddress)
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                defer { stream.cancel() }
                if let first { try await writer.write(first) }
                while let next = try await stream.next() { try await writer.write(next) }
                // A cancelled task's stream ends early too: then no final chunk, so the client
                // sees a failed download, not a short file.
                try Task.checkCancellation()
                try await writer.finish(nil)
            })
    }

    /// A card file's name as a download's name: letters, digits, `.`, `-` and `_` only.
    static func safeName(_ name: String) -> String {
        let last = name.split(separator: "/").last.map(String.init) ?? name
        let kept = String(
            last.unicodeScalars.filter {
                $0.isASCII && ($0.properties.isAlphabetic || "0123456789.-_".unicodeScalars.contains($0))
            }
            .map(Character.init))
        return kept.isEmpty || kept.allSatisfy { $0 == "." } ? "card-file" : String(kept.prefix(128))
    }
}
