import CNVRPlugin
import NVRPluginHost

extension CameraSession {
    /// Starts the sub-stream, when the camera has one (a sub-stream URL other than the main
    /// one): the grid's live view, and motion and object detection (far cheaper to decode
    /// there). Called on the camera's thread at each connection.
    func startSubstream(_ instance: PluginInstance, main source: LiveSource) -> Substream? {
        guard instance.plugin.has(UInt64(NVR_CAP_SUBSTREAM)), let sub = try? instance.liveSource(substream: true),
            sub.url != source.url
        else { return nil }
        // The sub-stream's thread asks the gate only for its object detection, which
        // `objectDetection(for:)` keeps behind its own lock (the rest of the gate is this
        // thread's).
        nonisolated(unsafe) let gate = gate
        let settings = gate.settings
        let s = Substream(
            cameraName: camera.name, instance: instance, tracker: events,
            motion: settings.motionEnabled ? settings.motion : nil, detect: settings.detect,
            detection: { gate.objectDetection(for: $0) }, live: liveSubstream, monitor: gate.motionMonitor,
            logger: logger, opener: opener)
        runningSubstream.withLock { $0 = s }
        s.start()
        return s
    }

    /// Stops the connection's sub-stream (joins its thread).
    func stopSubstream() {
        runningSubstream.withLock { s in
            defer { s = nil }
            return s
        }?.stop()
    }
}
