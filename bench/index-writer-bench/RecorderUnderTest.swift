import Foundation
import Logging
import NVRIndex
import NVRMedia
import NVRPlayback
import NVRRecorder
import NVRStorage
import NVRTime

/// The recording path as a camera thread drives it: a Segmenter writing files, handing its
/// rows to the server's one IndexWriter.
final class RecorderUnderTest: @unchecked Sendable {
    // One camera thread uses it.
    nonisolated(unsafe) static var writer: IndexWriter?
    let segmenter: Segmenter
    init(camera: CameraRecord, storage: StorageLayout, index: any IndexStore, segmentSeconds: Int, logger: Logger) {
        if Self.writer == nil { Self.writer = IndexWriter(index: index, logger: logger) }
        segmenter = Segmenter(
            camera: camera, storage: storage, writer: Self.writer!, settings: .init(segmentSeconds: segmentSeconds),
            logger: logger)
    }
    /// The stream is fed at its real pace: capture time = when it began + media time.
    private var base90k: Int64 = 0
    func begin(streams: [StreamDescription]) throws {
        try segmenter.begin(streams: streams)
        base90k = Time90k.now()
    }
    func append(dts: Int64, isKey: Bool, data: UnsafeRawBufferPointer) throws {
        try segmenter.append(
            stream: 0, pts: dts, dts: dts, duration: 0, isKey: isKey, data: data, capture90k: base90k + dts)
    }
    func end() throws { try segmenter.end() }
    static func finish(index: any IndexStore) { writer?.flush() }
    static func describe() -> String {
        guard let w = writer else { return "" }
        return String(
            format: "index writer: %d commits, worst hand-over to commit %.1f ms", w.commits.load(ordering: .relaxed),
            Double(w.worstLagNanos.load(ordering: .relaxed)) / 1e6)
    }
}
