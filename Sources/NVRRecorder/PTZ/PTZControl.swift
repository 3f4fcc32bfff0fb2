import Foundation
import NVRIndex
import NVRPluginHost

/// Sends PTZ commands to cameras through their plugins. Per camera, one command at a time in
/// the order asked, so a stop never overtakes the move it ends; and every move is ended by
/// the NVR too when its time is up, for cameras that ignore the move's own timeout: a lost
/// stop (a closed tab, a dropped connection) cannot leave a camera turning.
public final class PTZControl: @unchecked Sendable {
    // @unchecked Sendable: `cameras` is guarded by `lock`; each Camera's fields by its queue.
    private let plugins: PluginHost
    private let lock = NSLock()
    private var cameras: [Int64: Camera] = [:]

    // @unchecked Sendable: used only on `queue` after it is made.
    private final class Camera: @unchecked Sendable {
        let queue: DispatchQueue
        /// Bumped by every command that moves or stops: a move's own stop is sent only if
        /// nothing came after it.
        var generation: UInt64 = 0
        /// An instance made here, for a camera the recorder is not running (kept while its
        /// plugin and options stay the same, dropped once the recorder runs the camera).
        var own: (plugin: String, config: String, instance: PluginInstance)?
        /// Commands queued and not yet answered (guarded by PTZControl's lock).
        var waiting = 0
        init(id: Int64) { queue = DispatchQueue(label: "nvr.ptz.\(id)") }
    }

    public init(plugins: PluginHost) { self.plugins = plugins }

    /// What a camera's PTZ offers now.
    public struct Description: Codable, Sendable, Equatable {
        public struct Preset: Codable, Sendable, Equatable {
            public var token: String
            public var name: String
        }
        public struct Position: Codable, Sendable, Equatable {
            public var pan, tilt, zoom: Double
        }
        public var presets: [Preset]
        public var panTilt: Bool
        public var zoom: Bool
        public var absoluteZoom: Bool
        /// Where the camera points, when it says.
        public var position: Position?
    }

    public enum Answer: Sendable, Equatable {
        case described(Description)
        case done
        /// The token of the preset saved.
        case saved(preset: String)
    }

    public enum Failure: Error, CustomStringConvertible, Sendable {
        /// The camera (or its plugin) has no PTZ, or not this: the reason.
        case unsupported(String)
        /// The plugin did not load or refused the camera's options.
        case pluginFailed(String)
        /// The camera failed or refused the request.
        case cameraFailed(String)
        /// `maxWaiting` commands already wait for the camera (a slow camera and a flood).
        case busy(String)

        public var description: String {
            switch self {
            case .unsupported(let s), .pluginFailed(let s), .cameraFailed(let s), .busy(let s): s
            }
        }
    }

    /// Commands that may wait for one camera; more are refused (`Failure.busy`) rather than
    /// queued behind a camera that takes seconds to answer each.
    public static let maxWaiting = 8

    /// Whether a command changes where the camera points: it supersedes the NVR's own stop of
    /// an earlier move (a preset saved or a description asked does not).
    static func moves(_ c: PTZCommand) -> Bool {
        switch c {
        case .describe, .savePreset: false
        case .move, .stop, .goTo, .zoom: true
        }
    }

    /// Sends `command` to `camera`, through `running` (the recorder's instance for it) when
    /// there is one, else through an instance of its own. Waits for the camera's answer.
    public func send(_ command: PTZCommand, to camera: CameraRecord, running: PluginInstance?) async throws
        -> Answer
    {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Answer, any Error>) in
            enqueue(command, to: camera, running: running) { done.resume(with: $0) }
        }
    }

    /// Queues `command` behind the camera's earlier ones (in the order of calls) and returns at
    /// once; `done` gets the answer on the camera's queue.
    public func enqueue(
        _ command: PTZCommand, to camera: CameraRecord, running: PluginInstance?,
        done: @escaping @Sendable (Result<Answer, any Error>) -> Void
    ) {
        let cam = entry(camera.id ?? 0)
        let admitted = lock.withLock {
            guard cam.waiting < Self.maxWaiting else { return false }
            cam.waiting += 1
            return true
        }
        guard admitted else {
            return done(
                .failure(Failure.busy("camera \(camera.name) has \(Self.maxWaiting) PTZ commands waiting; try again")))
        }
        cam.queue.async { [self] in
            let result = Result { try run(command, camera, running, cam) }
            lock.withLock { cam.waiting -= 1 }
            done(result)
        }
    }

    private func entry(_ id: Int64) -> Camera {
        lock.withLock {
            if let c = cameras[id] { return c }
            let c = Camera(id: id)
            cameras[id] = c
            return c
        }
    }

    /// On the camera's queue.
    private func run(_ command: PTZCommand, _ camera: CameraRecord, _ running: PluginInstance?, _ cam: Camera) throws
        -> Answer
    {
        if running != nil { cam.own = nil }
        let instance = try running ?? ownInstance(camera, cam)
        guard instance.plugin.steers else {
            throw Self.noPTZ(camera)
        }
        let moves = Self.moves(command)
        let answer: String
        do { answer = try instance.ptz(request: command.pluginRequest) } catch let e as PluginError {
            // The camera may have taken it and failed to answer: stop it now rather than leave
            // it to a Timeout it may ignore.
            if moves {
                cam.generation &+= 1
                _ = try? instance.ptz(request: PTZCommand.stop.pluginRequest)
            }
            switch e.kind {
            case .unsupported:
                throw Self.noPTZ(camera)
            case .configuration: throw Failure.pluginFailed("camera \(camera.name)'s plugin '\(camera.plugin)': \(e)")
            case .transient: throw Failure.cameraFailed("camera \(camera.name): \(e)")
            }
        }
        let result = try Self.parse(answer, for: command, camera: camera.name)
        if moves { cam.generation &+= 1 }
        if case .move(_, _, _, let seconds) = command {
            let sent = cam.generation
            cam.queue.asyncAfter(deadline: .now() + seconds) {
                // Nothing since: end the move here too (the camera should have already).
                guard cam.generation == sent else { return }
                cam.generation &+= 1
                _ = try? instance.ptz(request: PTZCommand.stop.pluginRequest)
            }
        }
        return result
    }

    /// A camera whose plugin cannot steer at all.
    static func noPTZ(_ camera: CameraRecord) -> Failure {
        .unsupported("camera \(camera.name)'s plugin '\(camera.plugin)' cannot pan, tilt or zoom")
    }

    private func ownInstance(_ camera: CameraRecord, _ cam: Camera) throws -> PluginInstance {
        if let own = cam.own, own.plugin == camera.plugin, own.config == camera.config { return own.instance }
        cam.own = nil
        let plugin: LoadedPlugin
        do { plugin = try plugins.plugin(named: camera.plugin) } catch {
            throw Failure.pluginFailed("camera \(camera.name)'s plugin '\(camera.plugin)': \(error)")
        }
        // No instance for a plugin that cannot steer (every camera page asks).
        guard plugin.steers else {
            throw Self.noPTZ(camera)
        }
        do {
            let made = try PluginInstance(
                plugin: plugin, configJSON: camera.config,
                callbacks: SilentCallbacks())
            cam.own = (camera.plugin, camera.config, made)
            return made
        } catch {
            throw Failure.pluginFailed("camera \(camera.name)'s plugin '\(camera.plugin)': \(error)")
        }
    }

    /// The plugin's answer, bounded: at most 256 presets, 64 characters a token or name.
    static func parse(_ json: String, for command: PTZCommand, camera: String) throws -> Answer {
        struct Raw: Decodable {
            var unsupported: String?
            var presets: [Description.Preset]?
            var panTilt, zoom, absoluteZoom: Bool?
            var position: Description.Position?
            var preset: String?
            enum CodingKeys: String, CodingKey {
                case unsupported, presets, zoom, position, preset
                case panTilt = "pan_tilt"
                case absoluteZoom = "absolute_zoom"
            }
        }
        guard let raw = try? JSONDecoder().decode(Raw.self, from: Data(json.utf8)) else {
            throw Failure.cameraFailed("camera \(camera): the plugin's PTZ answer is not what nvr_plugin.h says")
        }
        if let why = raw.unsupported { throw Failure.unsupported("camera \(camera): \(why.scalarPrefix(200))") }
        switch command {
        case .describe:
            let presets = (raw.presets ?? []).prefix(256).compactMap { p -> Description.Preset? in
                guard !p.token.isEmpty, p.token.unicodeScalars.count <= 64 else { return nil }
                return .init(token: p.token, name: p.name.scalarPrefix(64))
            }
            return .described(
                Description(
                    presets: Array(presets), panTilt: raw.panTilt ?? false, zoom: raw.zoom ?? false,
                    absoluteZoom: raw.absoluteZoom ?? false, position: raw.position))
        case .savePreset:
            guard let token = raw.preset, !token.isEmpty, token.unicodeScalars.count <= 64 else {
                throw Failure.cameraFailed("camera \(camera): the plugin did not say the saved preset's token")
            }
            return .saved(preset: token)
        default:
            return .done
        }
    }
}
