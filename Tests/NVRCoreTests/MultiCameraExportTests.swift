import Foundation
import NVRIndex
import NVRPlayback
import TestSupport
import Testing

/// Several cameras' same range as one ZIP (MultiCameraExport, `nvr export --camera a,b,c`),
/// recorded in-process from encoded files, checked with unzip, Python's zipfile and ffprobe.
@Suite struct MultiCameraExportTests {
    static let patterns = [("front", "testsrc"), ("yard", "smptebars"), ("door", "rgbtestsrc")]

    /// `seconds` of each pattern recorded as its camera from `start`, in one-minute segments.
    static func record(_ h: RecorderHarness, seconds: Int, start: Int64) throws -> [CameraRecord] {
        try patterns.map { name, pattern in
            let clip = h.root + "/\(name).ts"
            try RecorderHarness.makeClip(clip, seconds: seconds, pattern: pattern)
            return try h.record([clip], as: name, start90k: start)
        }
    }

    @Test(arguments: [false, true])
    func threeCamerasAndOneThatRecordedNothingMakeOneZip(forceZip64: Bool) throws {
        let h = try RecorderHarness()
        let start = Time90k.now() - 3600 * 90_000
        var cameras = try Self.record(h, seconds: 20, start: start)
        cameras.append(try h.index.addCamera(CameraRecord(name: "garage", plugin: "demo", config: "{}", created90k: 0)))

        // From 3 s in (between key frames) to 15 s in.
        let from = start + 3 * 90_000
        let to = start + 15 * 90_000
        let export = try MultiCameraExport.build(
            index: h.index, storage: h.recorder.storage, cameras: cameras, start: from, end: to,
            forceZip64: forceZip64)
        #expect(export.files.map(\.name) == ["front.mp4", "yard.mp4", "door.mp4"])
        #expect(export.empty == ["garage"])
        let zip = h.root + "/export.zip"
        try export.archive.write(to: zip)
        let written = try FileManager.default.attributesOfItem(atPath: zip)[.size] as? Int
        #expect(Int64(written ?? 0) == export.archive.size, "the size said up front is the size written")

        let (dir, entries) = try unzipChecked(zip)
        #expect(Set(entries.keys) == ["front.mp4", "yard.mp4", "door.mp4", "export.txt"])
        for f in export.files {
            #expect(entries[f.name] == Int(f.result.mp4.size))
            let probed = try ffprobeStreams(dir + "/" + f.name)
            #expect(probed.map(\.codec) == ["h264"])
            #expect(abs((probed.first?.duration ?? 0) - 12) < 0.15, "\(f.name): \(probed)")
            #expect(try decodeErrors(dir + "/" + f.name).isEmpty)
        }
        let readme = try String(contentsOfFile: dir + "/export.txt", encoding: .utf8)
        #expect(readme.contains("front.mp4: \(Time90k.rfc3339(from))"), "\(readme)")
        #expect(readme.contains("garage: nothing recorded in this range"), "\(readme)")

        // Nothing from any camera: the NothingRecorded every export gives.
        #expect(throws: NothingRecorded.self) {
            try MultiCameraExport.build(
                index: h.index, storage: h.recorder.storage, cameras: cameras, start: start - 600 * 90_000,
                end: start - 60 * 90_000)
        }
    }

    /// `nvr export --camera a,b,c -o FILE.zip`, and the one-line errors around it.
    @Test func theCommandWritesTheSameArchive() throws {
        let h = try RecorderHarness()
        let start = Time90k.now() - 3600 * 90_000
        _ = try Self.record(h, seconds: 10, start: start)
        let config = h.root + "/nvr.toml"
        try "[storage]\nroot = \"\(h.root)\"\n[plugins]\ndir = \"\(TestEnvironment.buildDir)\"\n".write(
            toFile: config, atomically: true, encoding: .utf8)
        func nvr(_ args: [String]) throws -> ProcessResult {
            try runProcess(TestEnvironment.nvrExecutable, ["export", "--config", config] + args)
        }
        let range = ["--start", Time90k.rfc3339(start + 90_000), "--end", Time90k.rfc3339(start + 9 * 90_000)]
        let zip = h.root + "/cli.zip"
        let r = try nvr(["--camera", "front,yard,door", "-o", zip] + range)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("3 cameras") && r.stdout.contains("yard.mp4"), "\(r.stdout)")
        let (dir, entries) = try unzipChecked(zip)
        #expect(Set(entries.keys) == ["front.mp4", "yard.mp4", "door.mp4", "export.txt"])
        let door = try ffprobeStreams(dir + "/door.mp4")
        #expect(abs((door.first?.duration ?? 0) - 8) < 0.15, "\(door) \(r.stdout)")

        for (args, says) in [
            (["--camera", "front,yard", "-o", h.root + "/two.mp4"], ".zip"),
            (["--camera", "front,front", "-o", h.root + "/twice.zip"], "once"),
            (["--camera", "front,nobody", "-o", h.root + "/nobody.zip"], "nobody"),
            (["--camera", "front", "--timelapse", "1", "-o", h.root + "/t.mp4"], "timelapse"),
        ] {
            let bad = try nvr(args + range)
            let line = bad.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(
                bad.status != 0 && !line.contains("\n") && line.contains(says), "\(args): \(bad.stderr) \(bad.status)")
        }
    }
}
