import Foundation
import NVRIndex
import NVRMedia

/// The same range from several cameras as one ZIP: one MP4 per camera (RangeExport's, or a
/// Timelapse), built from the index with nothing re-encoded, and `export.txt`, which says
/// what each file covers, its gaps, and which cameras recorded nothing then. `nvr export`
/// with several cameras and `GET /api/export.zip` make the same archive.
public struct MultiCameraExport: Sendable {
    public struct File: Sendable {
        public var camera: String
        public var name: String
        public var result: RangeExport.Result
    }
    public var archive: ZipArchive
    public var files: [File]
    /// Cameras with nothing recorded in the range (left out of the archive).
    public var empty: [String]

    /// `speed`: a timelapse at that speed instead of every frame. Throws NothingRecorded when
    /// no camera has anything in the range; any other failure names its camera.
    public static func build(
        index: any IndexStore, storage: StorageLayout, cameras: [CameraRecord], start: Int64, end: Int64,
        speed: Int? = nil, forceZip64: Bool = false
    ) throws -> MultiCameraExport {
        var files: [File] = []
        var empty: [String] = []
        for cam in cameras {
            guard let id = cam.id else { continue }
            do {
                let result =
                    if let speed {
                        try Timelapse.build(
                            index: index, storage: storage, cameraID: id, start: start, end: end, speed: speed)
                    } else {
                        try RangeExport.build(index: index, storage: storage, cameraID: id, start: start, end: end)
                    }
                files.append(File(camera: cam.name, name: cam.name + ".mp4", result: result))
            } catch is NothingRecorded {
                empty.append(cam.name)
            } catch let e as ExportError {
                throw e
            } catch let e as MediaError {
                // Still a MediaError (a corrupt recording is answered as one), naming its camera.
                throw MediaError(e.kind, "\(cam.name): \(e.message)")
            } catch {
                throw ExportFailure(camera: cam.name, error: error)
            }
        }
        guard !files.isEmpty else { throw NothingRecorded(start: start, end: end) }
        let readme = Array(describe(files: files, empty: empty, start: start, end: end, speed: speed).utf8)
        var entries = files.map {
            ZipArchive.Entry(name: $0.name, parts: $0.result.mp4.parts, modified: $0.result.start90k / Time90k.hz)
        }
        entries.append(ZipArchive.Entry(name: "export.txt", parts: [.bytes(readme)], modified: start / Time90k.hz))
        return MultiCameraExport(
            archive: try ZipArchive(entries: entries, forceZip64: forceZip64), files: files, empty: empty)
    }

    static func describe(files: [File], empty: [String], start: Int64, end: Int64, speed: Int?) -> String {
        var s = "Recordings from \(Time90k.rfc3339(start)) to \(Time90k.rfc3339(end))"
        if let speed { s += ", as timelapses at \(speed)× (key frames only)" }
        s += ".\nEach file plays on the wall clock: where nothing was recorded, the picture before the gap is held.\n\n"
        for f in files {
            let mp4 = f.result.mp4
            s += "\(f.name): \(Time90k.rfc3339(f.result.start90k)) to \(Time90k.rfc3339(f.result.end90k)), "
            s += "plays \(Time90k.describeDuration(mp4.duration90k)), \(mp4.videoSamples) frames\n"
            for g in f.result.gaps {
                s += "  gap: \(Time90k.rfc3339(g.lowerBound)) to \(Time90k.rfc3339(g.upperBound))\n"
            }
            if let t = f.result.truncatedAt {
                s += "  ends early at \(Time90k.rfc3339(t)): the camera's codec changed there\n"
            }
        }
        for name in empty { s += "\(name): nothing recorded in this range\n" }
        return s
    }
}

/// One camera's part of an export failed for a reason other than an empty range.
public struct ExportFailure: Error, CustomStringConvertible, Sendable {
    public var camera: String
    public var reason: String
    init(camera: String, error: any Error) {
        self.camera = camera
        reason = "\(error)"
    }
    public var description: String { "\(camera): \(reason)" }
}
