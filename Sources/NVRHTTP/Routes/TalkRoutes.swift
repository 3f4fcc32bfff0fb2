import Foundation
import Hummingbird
import HummingbirdWebSocket
import NIOCore
import NVRAccess
import NVRIndex
import NVRMedia
import NVRPluginHost
import NVRRecorder
import NVRWorker
import Synchronization

/// Talking through a camera's speaker: a WebSocket that carries the talker's microphone as
/// PCM to the camera's audio back-channel (TalkSession), one talker per camera; and the plain
/// GET of the same path, which asks the camera whether it can be talked through and in what.
struct TalkRoutes: IndexedRoutes {
    let index: any IndexStore
    let plugins: PluginHost
    let recorder: Recorder?
    /// Cameras someone is talking through ("talk-ID"), shared with the recorder's.
    let talkers: OneAtATime
    let audit: AuditLog

    init(index: any IndexStore, plugins: PluginHost, recorder: Recorder?, audit: AuditLog) {
        self.index = index
        self.plugins = plugins
        self.recorder = recorder
        talkers = recorder?.talkers ?? OneAtATime()
        self.audit = audit
    }

    /// The camera, once this user may talk through it and its plugin can.
    func check(_ c: NVRContext) async throws -> CameraRecord {
        let cam = try await camera(c, allowed: { $0.mayTalk(camera: $1) }, to: "talk through")
        if let plugin = try? plugins.plugin(named: cam.plugin), !plugin.talks {
            throw APIError(
                .conflict, "no_talk",
                "camera \(cam.name) cannot be talked through: \(plugin.whyNoTalk ?? "its plugin '\(cam.plugin)' has no audio back-channel")"
            )
        }
        return cam
    }

    static func busy(_ name: String) -> APIError {
        APIError(.conflict, "busy", "someone is talking through \(name); one talker at a time")
    }

    static func apiError(_ e: TalkSession.Failure) -> APIError {
        switch e {
        case .noTalk(let why): APIError(.conflict, "no_talk", why)
        case .noBackChannel(let why): APIError(.conflict, "no_backchannel", why)
        case .cameraFailed(let why): APIError(.badGateway, "camera_failed", why)
        }
    }

    struct ProbeJSON: Encodable {
        var camera: String
        /// What the camera takes (PCMU, PCMA, MPEG4-GENERIC for AAC) and at what rate: the NVR
        /// converts to it.
        var codec: String
        var rate: Int
    }

    /// GET …/talk without the upgrade: opens the camera's back-channel, says what it takes and
    /// closes it (the page asks before it shows "Hold to talk").
    func register(on router: Router<NVRContext>) {
        router.get("/api/cameras/{name}/talk") { _, c -> Response in
            let cam = try await check(c)
            // The probe is a session of the camera's too: cameras that take one back-channel at a
            // time must not meet a probe and a talker at once.
            let key = "talk-\(cam.id ?? 0)"
            guard talkers.claim(key) else { throw Self.busy(cam.name) }
            defer { talkers.release(key) }
            let running = recorder?.session(named: cam.name)?.pluginInstance
            let audio = try await offload { [plugins] () throws -> RTSPBackChannel.Audio in
                do {
                    let s = try TalkSession(camera: cam, plugins: plugins, running: running)
                    defer { s.close() }
                    return s.audio
                } catch let e as TalkSession.Failure { throw Self.apiError(e) }
            }
            return try JSON.response(ProbeJSON(camera: cam.name, codec: audio.encoding, rate: audio.sampleRate))
        }
    }

    /// GET /api/cameras/{name}/talk (WebSocket). The talker sends a text message
    /// `{"format": "s16le"|"f32le", "rate": 48000, "channels": 1}`, waits for `{"type": "ready",
    /// "codec": "PCMU", "rate": 8000}`, then sends binary messages of PCM. Any failure is one
    /// text message `{"type": "error", "error": code, "message": why}`, then the close. Closing
    /// the socket ends the camera's back-channel session.
    func registerUpgrade(on router: Router<NVRContext>) {
        router.ws(
            "/api/cameras/{name}/talk",
            shouldUpgrade: { r, c in
                try LiveRoutes.checkOrigin(r, "talk through a camera")
                // Busy is said on the socket (a browser cannot read a refused upgrade's answer).
                _ = try await check(c)
                return .upgrade([:])
            },
            onUpgrade: { inbound, outbound, context in
                let name = context.requestContext.parameters.get("name") ?? ""
                let who = context.requestContext.identity?.name ?? "?"
                await talk(camera: name, user: who, address: context.requestContext.remoteAddress, inbound, outbound)
            })
    }

    /// Nanoseconds without a format or audio before the camera is given back, and of a talk.
    static let idleLimit: UInt64 = 10_000_000_000
    static let talkLimit: UInt64 = 600_000_000_000
    /// The largest message taken: 40 ms of 192 kHz stereo float is 61 KB.
    static let maxMessage = 256 * 1024

    struct Format: Decodable {
        var format: String
        var rate: Int
        var channels: Int
    }

    struct TalkMessage: Encodable {
        var type: String
        var codec: String?
        var rate: Int?
        var error: String?
        var message: String?
    }

    func talk(
        camera name: String, user: String, address: String?, _ inbound: WebSocketInboundStream,
        _ outbound: WebSocketOutboundWriter
    ) async {
        @Sendable func end(_ code: String, _ why: String) async {
            try? await send(TalkMessage(type: "error", error: code, message: why), outbound)
            try? await outbound.close(.normalClosure, reason: nil)
        }
        guard let cam = try? await offload({ [index] in try index.camera(named: name) }) else {
            return await end("not_found", "no camera named '\(name.prefix(64))'")
        }
        let key = "talk-\(cam.id ?? 0)"
        guard talkers.claim(key) else { return await end("busy", Self.busy(cam.name).message) }
        let running = recorder?.session(named: cam.name)?.pluginInstance
        let session: TalkSession
        do {
            session = try await offload { [plugins] in
                try TalkSession(camera: cam, plugins: plugins, running: running)
            }
        } catch let e as TalkSession.Failure {
            talkers.release(key)
            let api = Self.apiError(e)
            return await end(api.code, api.message)
        } catch {
            talkers.release(key)
            return await end("camera_failed", "\(error)")
        }
        audit.record(user, "camera.talk", target: cam.name, address: address)
        // The camera is given back when the talker leaves: after TEARDOWN, then the claim.
        defer {
            Task {
                try? await offload { session.close() }
                talkers.release(key)
            }
        }
        // A talker that says no format within 10 s, sends no audio for 10 s, or talks for more
        // than 10 minutes gives the camera back.
        let began = Atomic<Bool>(false)
        let lastAudio = Atomic<UInt64>(Interrupter.now())
        let opened = Interrupter.now()
        let watchdog = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                let now = Interrupter.now()
                if !began.load(ordering: .relaxed), now - opened > Self.idleLimit {
                    return await end("bad_format", "no format message within 10 s")
                }
                if began.load(ordering: .relaxed), now - lastAudio.load(ordering: .relaxed) > Self.idleLimit {
                    return await end("idle", "no audio for 10 s: the camera is given back")
                }
                if now - opened > Self.talkLimit { return await end("too_long", "a talk lasts at most 10 minutes") }
            }
        }
        defer { watchdog.cancel() }
        do {
            for try await message in inbound.messages(maxSize: Self.maxMessage) {
                switch message {
                case .text(let text):
                    guard !began.load(ordering: .relaxed) else { continue }
                    do {
                        let f = try JSONDecoder().decode(Format.self, from: Data(text.utf8))
                        try session.begin(format: f.format, rate: f.rate, channels: f.channels)
                    } catch let e as MediaError {
                        return await end("bad_format", e.message)
                    } catch {
                        return await end(
                            "bad_format",
                            "the first message must be {\"format\":\"s16le\",\"rate\":48000,\"channels\":1}")
                    }
                    began.store(true, ordering: .relaxed)
                    try await send(
                        TalkMessage(type: "ready", codec: session.audio.encoding, rate: session.audio.sampleRate),
                        outbound)
                case .binary(var buffer):
                    guard began.load(ordering: .relaxed) else {
                        return await end("bad_format", "audio came before the format message")
                    }
                    let bytes = buffer.readBytes(length: buffer.readableBytes) ?? []
                    lastAudio.store(Interrupter.now(), ordering: .relaxed)
                    session.send(bytes) { why in Task { await end("camera_failed", why) } }
                }
            }
        } catch {
            // The talker went away: the deferred close ends the camera's session.
        }
    }

    private func send(_ m: TalkMessage, _ outbound: WebSocketOutboundWriter) async throws {
        try await outbound.write(.text(String(decoding: try JSON.encode(m), as: UTF8.self)))
    }
}
