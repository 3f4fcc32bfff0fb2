import ArgumentParser
import Foundation
import NVRAccess
import NVRCameras
import NVRIndex
import NVRPluginHost
import NVRRecorder
import NVRStorage
import NVRTime

extension CameraCommand {
    /// `nvr camera set NAME …`: how a camera records. A running `nvr serve` picks changes up
    /// within a few seconds.
    struct SetSettings: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract:
                "Change a camera's URL and options, recording mode, weekly schedule, pre/post-roll and motion detection; prints the settings.",
            discussion: """
                Modes: continuous (keep everything; event footage is marked), events (keep only event clips \
                with their pre/post-roll), off.

                Schedule: rules separated by ';', each 'DAYS [HH:MM-HH:MM] MODE'; the first that matches wins, \
                else --mode applies. DAYS: '*', 'mon', 'mon-fri', 'sat,sun'. A range ending before it starts \
                runs past midnight. Example: --schedule "mon-fri 08:00-18:00 continuous; * events" --tz Europe/Paris

                Masks: polygons of normalized points 'x,y x,y x,y' (0…1 from the top left) that motion ignores. \
                More in design/motion.md.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Camera name.") var name: String
        @Option(help: "New stream URL (the camera reconnects with it).") var url: String?
        @Option(name: .customLong("option"), help: "Set a plugin option key=value (repeatable), e.g. password=…")
        var options: [String] = []
        @Option(help: "Remove a plugin option (repeatable).") var removeOption: [String] = []
        @Option(help: "continuous, events or off.") var mode: String?
        @Option(help: "Weekly schedule of modes (see above); \"\" removes it.") var schedule: String?
        @Option(help: "IANA time zone of the schedule (default: the server's).") var tz: String?
        // .unconditional: "--pre-roll -3" is a bad value to explain, not a missing one.
        @Option(parsing: .unconditional, help: "Seconds of footage kept before an event (default 5).") var preRoll:
            Double?
        @Option(parsing: .unconditional, help: "Seconds of footage kept after an event (default 10).") var postRoll:
            Double?
        @Option(help: "Motion detection: auto (on when the camera can record events), on, off.") var motion: String?
        @Option(parsing: .unconditional, help: "Motion sensitivity 1…100 (default 50).") var motionSensitivity: Int?
        @Option(parsing: .unconditional, help: "Percent of the picture that must change (default 0.3).")
        var motionMinArea: Double?
        @Option(help: "Frames the detector decodes: auto, keyframes, all (default auto).") var motionFrames: String?
        @Option(parsing: .unconditional, help: "Looks per second when decoding all frames (default 5).") var motionFps:
            Double?
        @Option(parsing: .unconditional, help: "Seconds without motion that end a motion event (default 2).")
        var motionQuiet: Double?
        @Option(help: "Add a mask polygon 'x,y x,y x,y …' (repeatable).") var motionMask: [String] = []
        @Flag(help: "Remove every motion mask first.") var clearMasks = false
        @Option(help: "Objects to detect where there is motion, e.g. person or person,car; off to stop.")
        var detect: String?
        @Option(parsing: .unconditional, help: "The lowest score a detection counts at, 0…1 (default 0.6).")
        var detectMinScore: Double?
        @Option(help: "In events mode, record only around events of these types, e.g. person; all for every event.")
        var recordOn: String?
        @Option(help: "Add or replace a detection zone 'NAME=x,y x,y x,y …' (repeatable).") var zone: [String] = []
        @Option(help: "Remove a detection zone by name (repeatable).") var removeZone: [String] = []
        @Option(help: "Objects of LABEL make events only in these zones: 'LABEL=zone[,zone…]'; 'LABEL=' clears.")
        var requireZones: [String] = []
        @Option(help: "Labels whose events are review alerts, e.g. person,doorbell (default person); '' for none.")
        var alertLabels: String?
        @Option(help: "Alerts only when the object stood in one of these zones, e.g. driveway; '' for anywhere.")
        var alertZones: String?
        @Option(
            help:
                "The recorder node that records this camera while it is up (PostgreSQL index with nodes); \"\" for any."
        )
        var node: String?
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let (config, storage, index) = try global.open()
            guard var cam = try index.camera(named: name), let id = cam.id else {
                throw CommandFailure("no camera named '\(name)'")
            }
            if let node {
                guard node.isEmpty || NVRConfig.isNodeName(node) else {
                    throw ValidationError("--node must be 1…64 letters, digits, '-' or '_'")
                }
                cam.preferredNode = node.isEmpty ? nil : node
                try index.updateCamera(cam)
                AuditLog(index: index).record(AuditLog.cliUser, "camera.node", target: name, detail: ["node": node])
            }
            if url != nil || !options.isEmpty || !removeOption.isEmpty {
                if url != nil, try parseOptions(options)["url"] != nil {
                    throw ValidationError("give the URL once: --url or --option url=, not both")
                }
                var c = CameraAdmin.Change(url: url)
                for (k, v) in try parseOptions(options) { c.options[k] = v }
                for k in removeOption { c.options[k] = .some(nil) }
                let admin = CameraAdmin(
                    index: index, storage: storage, plugins: PluginHost(directory: config.resolvedPluginsDir))
                do { cam = try admin.update(name: name, c) } catch { throw CommandFailure("\(error)") }
                var detail = try parseOptions(options)
                if let url { detail["url"] = url }
                for k in removeOption { detail[k] = "(removed)" }
                AuditLog(index: index).record(AuditLog.cliUser, "camera.update", target: name, detail: detail)
            }
            var change = RecordingSettingsChange()
            change.mode = mode
            change.schedule = schedule
            change.tz = tz
            change.preRollSeconds = preRoll
            change.postRollSeconds = postRoll
            change.motion = motion
            change.motionSensitivity = motionSensitivity
            change.motionMinArea = motionMinArea
            change.motionFrames = motionFrames
            change.motionFps = motionFps
            change.motionQuietSeconds = motionQuiet
            if clearMasks { change.motionMasks = [] }
            change.addMotionMasks = motionMask
            change.detect = detect
            change.detectMinScore = detectMinScore
            change.recordOn = recordOn
            change.addZones = zone
            change.removeZones = removeZone
            change.addRequiredZones = requireZones
            change.alertLabels = alertLabels
            change.alertZones = alertZones
            let r: CameraRecordingRecord
            do { r = try change.apply(to: try index.recordingSettings(cameraID: id)) } catch let e as ConfigError {
                throw ValidationError(e.description)
            }
            try index.setRecordingSettings(r)
            AuditLog(index: index).record(
                AuditLog.cliUser, "camera.recording", target: name,
                detail: ["mode": r.mode, "schedule": r.schedule ?? ""])
            try Show.print(cam, r, json: json)
        }
    }

    /// `nvr camera show NAME`: the recording settings in force.
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a camera's recording settings.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Camera name.") var name: String
        @Flag(help: "Print JSON.") var json = false

        struct Output: Encodable {
            var camera: String, mode: String, schedule: String?, tz: String?
            var preRollSeconds: Double, postRollSeconds: Double, motionActive: Bool, motion: MotionSettings
            var detect: DetectSettings
        }

        func run() throws {
            let (_, _, index) = try global.open()
            guard let cam = try index.camera(named: name), let id = cam.id else {
                throw CommandFailure("no camera named '\(name)'")
            }
            try Self.print(cam, try index.recordingSettings(cameraID: id), json: json)
        }

        static func print(_ cam: CameraRecord, _ r: CameraRecordingRecord, json: Bool) throws {
            let s = try RecordingSettings(r)
            let out = Output(
                camera: cam.name, mode: r.mode, schedule: r.schedule, tz: r.tz,
                preRollSeconds: Double(r.preRoll90k) / 90_000, postRollSeconds: Double(r.postRoll90k) / 90_000,
                motionActive: s.motionEnabled, motion: s.motion, detect: s.detect)
            if json {
                try printJSON(out)
                return
            }
            let m = s.motion
            Swift.print(
                """
                camera     \(cam.name)
                mode       \(r.mode)\(r.schedule.map { " outside the schedule\n" + "schedule   \($0)" + " (\(r.tz ?? "server time zone"))" } ?? "")
                now        \(s.mode(at: Time90k.now()).rawValue)
                pre-roll   \(out.preRollSeconds) s, post-roll \(out.postRollSeconds) s
                motion     \(s.motionEnabled ? "on" : "off") (\(m.enabled.rawValue)); sensitivity \(m.sensitivity), min area \(m.minArea) %, \
                frames \(m.frames.rawValue), \(m.fps) fps, quiet \(m.quietSeconds) s, \(m.masks.count) mask(s)
                detect     \(s.detect.enabled ? "\(s.detect.labels.joined(separator: ", ")); min score \(s.detect.minScore), \(s.detect.fps) fps" : "off")
                records on \(s.detect.recordOn.isEmpty ? "every event" : s.detect.recordOn.joined(separator: ", ")) (in events mode)
                alerts     \(s.detect.alertLabels.isEmpty ? "none" : s.detect.alertLabels.joined(separator: ", "))\(s.detect.alertZones.isEmpty ? "" : " in " + s.detect.alertZones.joined(separator: " or "))
                zones      \(s.detect.zones.isEmpty ? "none" : s.detect.zones.map { z in "\(z.name) (\(z.points.count) points)" }.joined(separator: ", "))\(s.detect.requiredZones.isEmpty ? "" : "; " + s.detect.requiredZones.sorted { $0.key < $1.key }.map { "\($0.key) only in \($0.value.joined(separator: " or "))" }.joined(separator: ", "))
                """)
        }
    }
}
