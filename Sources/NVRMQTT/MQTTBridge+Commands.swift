import Foundation
import NVRIndex
import NVRRecorder
import NVRStorage

extension MQTTBridge {
    func handleCommands() {
        let pending = commands.withLock { c -> [(String, [UInt8])] in
            defer { c = [] }
            return c
        }
        for (topic, payload) in pending { command(topic, payload) }
    }

    /// What an OFF replaced, for the ON that follows (kept in the index across restarts).
    struct Previous: Codable {
        var mode: String?
        var schedule: String?
        var motion: String?
    }

    /// <prefix>/<camera>/recording/set and motion/set with ON or OFF, changed as
    /// `PUT /api/cameras/{name}/recording-settings` changes them.
    func command(_ topic: String, _ payload: [UInt8]) {
        let parts = topic.dropFirst(options.prefix.count + 1).split(separator: "/", omittingEmptySubsequences: false)
        if parts.count == 2, parts[1] == "ptz" { return ptz(String(parts[0]), topic, payload) }
        let value = String(decoding: payload, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            .uppercased()
        guard parts.count == 3, parts[2] == "set", value == "ON" || value == "OFF" else {
            return badPayload(topic, "expected ON or OFF on <camera>/recording/set or <camera>/motion/set")
        }
        let name = String(parts[0])
        let what = String(parts[1])
        do {
            guard let cam = try index.camera(named: name), let id = cam.id else {
                return badPayload(topic, "no camera named \(name)")
            }
            let current = try index.recordingSettings(cameraID: id)
            let key = "mqtt.previous.\(what).\(id)"
            let saved = try index.setting(key).flatMap { try? JSONDecoder().decode(Previous.self, from: Data($0.utf8)) }
            var next = current
            switch (what, value) {
            case ("recording", "OFF"):
                // Off now and whatever the schedule says: the schedule is kept for the ON.
                guard current.mode != "off" || current.schedule != nil else { break }
                try save(Previous(mode: current.mode, schedule: current.schedule), key)
                next.mode = "off"
                next.schedule = nil
            case ("recording", "ON"):
                guard current.mode == "off", current.schedule == nil else { break }
                next.mode = saved?.mode ?? "continuous"
                next.schedule = saved?.schedule
            case ("motion", "OFF"):
                let settings = try RecordingSettings(current)
                guard settings.motionEnabled else { break }
                try save(Previous(motion: settings.motion.enabled.rawValue), key)
                var change = RecordingSettingsChange()
                change.motion = "off"
                next = try change.apply(to: current)
            case ("motion", "ON"):
                guard !(try RecordingSettings(current).motionEnabled) else { break }
                var change = RecordingSettingsChange()
                change.motion = saved?.motion ?? "on"
                next = try change.apply(to: current)
                // What was saved (auto, in continuous mode) may not turn it on: then on.
                if !(try RecordingSettings(next).motionEnabled) {
                    change.motion = "on"
                    next = try change.apply(to: current)
                }
            case ("detect", _):
                return badPayload(topic, "this NVR has no object detection yet: detect/set does nothing")
            default:
                return badPayload(topic, "unknown command \(what) (recording/set, motion/set)")
            }
            if next != current { try index.setRecordingSettings(next) }
            audit.record("mqtt", "camera.\(what)", target: name, detail: ["set": value, "via": "mqtt"])
            logger.notice("mqtt: \(name) \(what) \(value)")
            // Acknowledged on the state topic at once (the recorder applies it within two seconds).
            publishRetained("\(options.prefix)/\(name)/\(what)/state", value)
        } catch {
            logger.warning("mqtt: \(topic.prefix(200)): \(error)")
        }
    }

    /// <prefix>/<camera>/ptz: a word (left, right, up, down, zoom_in, zoom_out, stop,
    /// preset:TOKEN) or the JSON that `POST /api/cameras/{name}/ptz` takes. Queued behind the
    /// camera's earlier commands from here and the API, never waited for here.
    func ptz(_ name: String, _ topic: String, _ payload: [UInt8]) {
        let command: PTZCommand
        do { command = try PTZCommand(mqtt: String(decoding: payload, as: UTF8.self)) } catch {
            return badPayload(topic, error.description)
        }
        let cam: CameraRecord
        do {
            guard let found = try index.camera(named: name) else { return badPayload(topic, "no camera named \(name)") }
            cam = found
        } catch {
            return logger.warning("mqtt: \(topic.prefix(200)): \(error)")
        }
        let (logger, audit) = (logger, audit)
        recorder.ptz.enqueue(command, to: cam, running: recorder.session(named: name)?.pluginInstance) { result in
            switch result {
            case .failure(let e): logger.warning("mqtt: \(topic.prefix(200)): \(e)")
            case .success(.saved(let token)):
                audit.record("mqtt", "ptz.preset", target: name, detail: ["preset": token, "via": "mqtt"])
            case .success: break
            }
        }
    }

    private func save(_ p: Previous, _ key: String) throws {
        let data = try JSONEncoder().encode(p)
        try index.setSetting(key, String(decoding: data, as: UTF8.self))
    }

    /// Logged once per topic, then ignored: MQTT has no sender to answer.
    func badPayload(_ topic: String, _ why: String) {
        guard badPayloadTopics.count < 1000, badPayloadTopics.insert(String(topic.prefix(200))).inserted else { return }
        logger.warning("mqtt: ignored \(topic.prefix(200)): \(why)")
    }
}
