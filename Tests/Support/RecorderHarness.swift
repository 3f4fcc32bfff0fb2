import Foundation
import NVRCameras
import NVRCommands
import NVRIndex
import NVRPlayback
import NVRRecorder
import NVRStorage

/// A Recorder on a temporary storage root, for tests that record real cameras.
public final class RecorderHarness {
    public let root: String
    public let recorder: Recorder
    /// The recorder's index, as SQLite: tests lock it, fill it and look into it.
    public let index: IndexDatabase

    public init(segmentSeconds: Int = 3, pluginsDir: String? = nil, configure: (inout NVRConfig) -> Void = { _ in })
        throws
    {
        root = TestEnvironment.tempDir("rec")
        var config = TestEnvironment.config(root: root, segmentSeconds: segmentSeconds, pluginsDir: pluginsDir)
        configure(&config)
        let storage = StorageLayout(root: config.storageRoot)
        try storage.prepare()
        index = try IndexDatabase(path: storage.indexPath)
        recorder = try Recorder(options: Recorder.Options(config: config), index: index, logger: TestEnvironment.logger)
        // These tests are not about free space: don't let a nearly full machine delete their footage.
        try index.setSetting(RetentionSettings.minFreeKey, "0")
    }

    deinit {
        recorder.stop()
        TestEnvironment.cleanup(root)
    }

    public func add(_ name: String, plugin: String = "rtsp", _ config: [String: String]) throws {
        try CameraAdmin(index: index, storage: recorder.storage, plugins: recorder.plugins).add(
            name: name, plugin: plugin, config: config)
    }

    public func camera(_ name: String) throws -> CameraRecord {
        guard let c = try index.camera(named: name) else { throw FixtureError("no camera \(name) in the index") }
        return c
    }

    /// A camera's segments as the index has them once what the recorder handed to its index
    /// writer is committed.
    public func segments(_ name: String) throws -> [SegmentRecord] {
        recorder.writer.flush()
        return try index.segments(cameraID: try camera(name).id!)
    }

    public func completeSegments(_ name: String) throws -> [SegmentRecord] {
        try segments(name).filter { $0.state == .complete }
    }

    public func path(_ s: SegmentRecord) -> String { recorder.storage.absolute(s.path) }
}
