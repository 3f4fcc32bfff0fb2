import NVRIndex
import NVRRecorder
import NVRTime

/// What `nvr camera list` and `GET /api/cameras` say about a camera: its state (live from the
/// running recorder when there is one, else as `nvr serve` last recorded it), its stream as
/// the newest segment recorded it, and the storage it uses.
public struct CameraOverview: Sendable {
    public var camera: CameraRecord
    /// nil: the camera has never been started.
    public var state: String?
    public var reason: String?
    public var since90k: Int64?
    public var lastFrame90k: Int64?
    public var fps: Double?
    public var bitRate: Int64?
    public var storage: CameraStorageSummary
    public var video: SampleEntryRecord?
    public var audio: SampleEntryRecord?
    /// The recording mode in force now (from the settings when the camera is not running).
    public var mode: String?
    /// Where motion is looked for (live), or "on"/"off" from the settings.
    public var motion: String?
    /// Object detection: nil when off; the labels; "loading the model"; "failed: why" (live, or
    /// as the last server's detector ended up).
    public var detection: String?
    /// What the camera itself reports through its plugin (battery, card...), as JSON.
    public var cameraStatus: String?
    /// What of the camera's streams is not recorded, and why (live only).
    public var notes: [String]?

    public static func load(_ c: CameraRecord, index: any IndexStore, recorder: Recorder? = nil) throws
        -> CameraOverview
    {
        let sum = try index.storageSummary(cameraID: c.id!)
        let live = recorder?.session(named: c.name)?.status
        let saved = live == nil ? try index.cameraState(cameraID: c.id!) : nil
        var o = CameraOverview(
            camera: c, state: live?.state.rawValue ?? saved?.state, reason: live?.reason ?? saved?.reason,
            since90k: live?.since90k ?? saved?.since90k, lastFrame90k: live?.lastFrame90k ?? sum.newest90k,
            fps: live?.fps, bitRate: live?.bitRate, storage: sum)
        if let live {
            o.mode = live.mode
            o.motion = live.motion
            o.detection = live.detection
            o.notes = live.notes
        } else if let settings = try? RecordingSettings.load(cameraID: c.id!, index: index) {
            o.mode = settings.mode(at: Time90k.now()).rawValue
            o.motion = settings.motionEnabled ? "on" : "off"
            if settings.detect.enabled {
                let saved = try? index.setting(Recorder.detectionStatusKey)
                o.detection =
                    saved.flatMap { $0.hasPrefix("failed") ? $0 : nil }
                    ?? settings.detect.labels.joined(separator: ", ")
            }
        }
        o.cameraStatus =
            try recorder?.session(named: c.name)?.pluginInstance?.status() ?? index.pluginStatus(cameraID: c.id!)?.json
        if let seg = try index.newestSegments(cameraID: c.id!, limit: 1).first {
            o.video = try index.sampleEntry(id: seg.videoEntryID)
            o.audio = try seg.audioEntryID.flatMap { try index.sampleEntry(id: $0) }
        }
        return o
    }
}
