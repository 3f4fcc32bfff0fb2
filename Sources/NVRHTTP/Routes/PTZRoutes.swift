import Foundation
import Hummingbird
import NVRAccess
import NVRIndex
import NVRPluginHost
import NVRRecorder

/// Pan, tilt, zoom and presets of a camera: what it offers (anyone who may watch it) and
/// commands (admins, and viewers given `ptz`). Commands go through the recorder's PTZControl,
/// which MQTT shares, so one camera's commands keep their order whoever sends them.
struct PTZRoutes: IndexedRoutes {
    let index: any IndexStore
    let recorder: Recorder?
    let control: PTZControl
    let audit: AuditLog

    init(index: any IndexStore, plugins: PluginHost, recorder: Recorder?, audit: AuditLog) {
        self.index = index
        self.recorder = recorder
        control = recorder?.ptz ?? PTZControl(plugins: plugins)
        self.audit = audit
    }

    func register(on router: Router<NVRContext>) {
        router.get("/api/cameras/{name}/ptz") { _, c in try await describe(c) }
        router.post("/api/cameras/{name}/ptz") { r, c in try await command(r, c) }
    }

    struct DescriptionJSON: Encodable {
        var camera: String
        /// Whoever asks may send commands.
        var steer: Bool
        var presets: [PTZControl.Description.Preset]
        var panTilt: Bool
        var zoom: Bool
        var absoluteZoom: Bool
        var position: PTZControl.Description.Position?
    }

    /// GET …/ptz: what the camera's PTZ offers now (asked of the camera), or 409 with the reason
    /// it has none.
    func describe(_ c: NVRContext) async throws -> Response {
        let who = try identity(c)
        let cam = try await camera(c)
        guard case .described(let d) = try await send(.describe, cam) else {
            throw APIError(.badGateway, "camera_failed", "camera \(cam.name) did not describe its PTZ")
        }
        return try JSON.response(
            DescriptionJSON(
                camera: cam.name, steer: who.maySteer(camera: cam.name), presets: d.presets, panTilt: d.panTilt,
                zoom: d.zoom, absoluteZoom: d.absoluteZoom, position: d.position))
    }

    struct DoneJSON: Encodable {
        var ok = true
        /// The saved preset's token (savePreset).
        var preset: String?
    }

    /// POST …/ptz with a PTZCommand.Body: answered once the camera has taken the command.
    func command(_ r: Request, _ c: NVRContext) async throws -> Response {
        let who = try identity(c)
        let cam = try await camera(c, allowed: { $0.maySteer(camera: $1) }, to: "turn or zoom")
        let body = try await decode(PTZCommand.Body.self, r, c)
        let command: PTZCommand
        do { command = try PTZCommand(body) } catch { throw APIError.badRequest(error.description) }
        let answer = try await send(command, cam)
        if case .saved(let token) = answer {
            audit.record(
                who.name, "ptz.preset", target: cam.name,
                detail: ["preset": token, "name": body.name ?? ""], address: c.remoteAddress)
            return try JSON.response(DoneJSON(preset: token))
        }
        return try JSON.response(DoneJSON())
    }

    private func send(_ command: PTZCommand, _ cam: CameraRecord) async throws -> PTZControl.Answer {
        do {
            return try await control.send(
                command, to: cam, running: recorder?.session(named: cam.name)?.pluginInstance)
        } catch let e as PTZControl.Failure {
            switch e {
            case .unsupported(let why): throw APIError(.conflict, "no_ptz", why)
            case .pluginFailed(let why): throw APIError(.conflict, "plugin_failed", why)
            case .busy(let why): throw APIError(.conflict, "busy", why)
            case .cameraFailed(let why): throw APIError(.badGateway, "camera_failed", why)
            }
        }
    }
}
