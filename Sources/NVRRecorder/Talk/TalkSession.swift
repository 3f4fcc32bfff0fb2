import Foundation
import NVRIndex
import NVRMedia
import NVRPluginHost

/// One person talking through one camera's speaker: the camera's audio back-channel (its
/// main live RTSP URL, asked of its plugin, on a connection of its own) fed with the talker's
/// microphone, converted as it comes. The camera's socket is written on the session's own
/// queue, never on the caller's (an HTTP server's event loop).
public final class TalkSession: @unchecked Sendable {
    // @unchecked Sendable: `encoder` is used on `queue` only; `backlog`, `failed` and the rate
    // budget under `lock`; the rest is immutable.
    public enum Failure: Error, CustomStringConvertible, Sendable {
        /// The camera's plugin cannot talk (its reason), or its stream is not RTSP.
        case noTalk(String)
        /// The camera answered that it has no back-channel, or one this cannot feed.
        case noBackChannel(String)
        /// The plugin did not start, or the camera did not answer.
        case cameraFailed(String)

        public var description: String {
            switch self {
            case .noTalk(let s), .noBackChannel(let s), .cameraFailed(let s): s
            }
        }
    }

    public let camera: String
    public var audio: RTSPBackChannel.Audio { channel.audio }
    private let channel: RTSPBackChannel
    private let queue: DispatchQueue
    private var encoder: TalkEncoder?
    private let lock = NSLock()
    private var backlog = 0
    private var failed = false
    /// Input bytes a second of audio is (set by `begin`), and what has come since.
    private var bytesPerSecond = 0
    private var began: UInt64 = 0
    private var received = 0
    /// Messages that may wait for the camera (two seconds of a page's); past it the talker is
    /// told the camera is too slow.
    static let maxBacklog = 50
    /// How much faster than real time a talker may send (with a second's burst): audio is
    /// played as it comes, so more is a client flooding the camera.
    static let rateAllowance = 1.5

    /// The URL a camera is talked to on: its plugin's main live source, which must be rtsp://.
    static func backChannelURL(_ camera: CameraRecord, plugins: PluginHost, running: PluginInstance?) throws -> String {
        let plugin: LoadedPlugin
        do { plugin = try running?.plugin ?? plugins.plugin(named: camera.plugin) } catch {
            throw Failure.cameraFailed("camera \(camera.name)'s plugin '\(camera.plugin)': \(error)")
        }
        guard plugin.talks else {
            throw Failure.noTalk(
                "camera \(camera.name) cannot be talked through: \(plugin.whyNoTalk ?? "its plugin '\(camera.plugin)' has no audio back-channel")"
            )
        }
        let source: LiveSource
        do {
            let instance =
                try running
                ?? PluginInstance(plugin: plugin, configJSON: camera.config, callbacks: SilentCallbacks())
            source = try instance.liveSource(substream: false)
        } catch {
            throw Failure.cameraFailed("camera \(camera.name): \(error)")
        }
        guard source.url.lowercased().hasPrefix("rtsp://"), source.listen != true else {
            throw Failure.noTalk(
                "camera \(camera.name)'s stream is not plain rtsp:// (\(source.url.prefix(8))…): talking needs its RTSP audio back-channel"
            )
        }
        return source.url
    }

    /// Opens the camera's back-channel (blocks while the camera answers, up to `timeout` per
    /// answer).
    public init(camera: CameraRecord, plugins: PluginHost, running: PluginInstance?, timeout: Double = 5) throws {
        self.camera = camera.name
        let url = try Self.backChannelURL(camera, plugins: plugins, running: running)
        do {
            channel = try RTSPBackChannel(url: url, timeoutSeconds: timeout, interrupter: Interrupter())
        } catch let e as MediaError where e.kind == .unsupported {
            throw Failure.noBackChannel("camera \(camera.name): \(e.message)")
        } catch {
            throw Failure.cameraFailed("camera \(camera.name): \(error)")
        }
        queue = DispatchQueue(label: "nvr.talk.\(camera.id ?? 0)")
    }

    deinit { channel.close() }

    /// What the talker's microphone sends; refused in one line when it cannot be converted to
    /// what the camera takes.
    public func begin(format: String, rate: Int, channels: Int) throws {
        guard let f = TalkEncoder.SampleFormat(rawValue: format) else {
            throw MediaError(
                .unsupported,
                "a microphone sending '\(format.prefix(32))' (this takes \(TalkEncoder.SampleFormat.allCases.map(\.rawValue).joined(separator: " or ")))"
            )
        }
        let e = try TalkEncoder(
            format: f, rate: rate, channels: channels, encoding: channel.audio.encoding,
            outputRate: channel.audio.sampleRate)
        queue.sync { encoder = e }
        lock.withLock {
            bytesPerSecond = rate * channels * (f == .s16le ? 2 : 4)
            began = Interrupter.now()
        }
    }

    /// Converts and sends `pcm` on the session's queue; `onFailure` is called once, with why,
    /// when the camera stops taking audio (or takes it too slowly).
    public func send(_ pcm: [UInt8], onFailure: @escaping @Sendable (String) -> Void) {
        let refusal = lock.withLock { () -> String? in
            guard !failed else { return "" }
            received += pcm.count
            let seconds = Double(Interrupter.now() - began) / 1e9
            if Double(received) > (seconds + 1) * Double(bytesPerSecond) * Self.rateAllowance {
                return "the microphone sends faster than real time"
            }
            guard backlog < Self.maxBacklog else { return "camera \(camera) takes audio more slowly than it is sent" }
            backlog += 1
            return nil
        }
        if let refusal {
            if !refusal.isEmpty { fail(refusal, onFailure) }
            return
        }
        queue.async { [self] in
            lock.withLock { backlog -= 1 }
            guard !lock.withLock({ failed }), let encoder else { return }
            do { try channel.send(try encoder.encode(pcm)) } catch { fail("camera \(camera): \(error)", onFailure) }
        }
    }

    /// Says why once; anything sent after is dropped.
    private func fail(_ why: String, _ onFailure: @Sendable (String) -> Void) {
        let first = lock.withLock { () -> Bool in
            defer { failed = true }
            return !failed
        }
        if first { onFailure(why) }
    }

    /// Ends the back-channel (TEARDOWN) after what was sent before and what the encoder still
    /// held; blocks until then (at most the socket's timeout per write behind it).
    public func close() {
        queue.sync {
            if !lock.withLock({ failed }), let rest = try? encoder?.finish(), !rest.isEmpty { try? channel.send(rest) }
            encoder = nil
            channel.close()
        }
    }

    /// RTP packets sent so far (20 ms of G.711, or an AAC frame, each).
    public var packetsSent: Int { queue.sync { channel.packetsSent } }
}
