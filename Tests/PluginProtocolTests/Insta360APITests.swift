import Foundation
import Insta360API
import TestSupport
import Testing

/// The Insta360 plugin's decoders: OSC answers as PROTOCOLS.md documents them, OSC's
/// end-of-capture times with their zone, file names, and durations read from MP4 headers.
@Suite struct Insta360APITests {
    @Test func decodesStateOptionsCommandsAndErrors() throws {
        let state = try OSCState(
            json: Data(
                #"{"fingerprint":"FPR_52923","state":{"_cardState":"noSpace","batteryLevel":0.64,"storageUri":"http://192.168.42.1:80/DCIM/Camera01/"}}"#
                    .utf8))
        #expect(
            state.fingerprint == "FPR_52923" && state.batteryLevel == 0.64 && state.card == .noSpace
                && state.cardDescription == "full")
        #expect(throws: OSCError.self) { try OSCState(json: Data(#"{"state":{}}"#.utf8)) }

        let options = OSCOptions(results: [
            "options": [
                "remainingSpace": 51_615_857_116, "totalSpace": 64_000_000_000, "captureMode": "video",
                "_dateTime": "2026:11:22 18:30:00+08:00",
            ]
        ])
        #expect(
            options.remainingSpace == 51_615_857_116 && options.totalSpace == 64_000_000_000
                && options.captureMode == "video")
        #expect(options.clockUTC == ISO8601DateFormatter().date(from: "2026-11-22T10:30:00Z")!.timeIntervalSince1970)
        // Insta360's reference: _dateTime without a zone; the zone comes from dateTimeZone, or
        // failing that from elsewhere (the card's file stamps).
        let t = ISO8601DateFormatter().date(from: "2026-11-22T10:30:00Z")!.timeIntervalSince1970
        let zoneless = OSCOptions(results: ["options": ["_dateTime": "2026:11:22 18:30:00"]])
        #expect(zoneless.clockUTC == nil && zoneless.clockUTC(zoneFallback: 8 * 3600) == t)
        let standard = OSCOptions(results: [
            "options": ["_dateTime": "2026:11:22 18:30:00", "dateTimeZone": "2026:11:22 18:30:01+08:00"]
        ])
        #expect(standard.clockUTC(zoneFallback: 0) == t + 1)
        #expect(
            OSC.zoneSeconds(of: "2026:11:22 18:27:46+08:00") == 8 * 3600
                && OSC.zoneSeconds(of: "2026:11:22 18:27:46-03:30") == -12_600)
        #expect(OSC.zoneSeconds(of: "2026:11:22 18:27:46") == nil)

        let running = try OSCCommandResult(
            json: Data(
                #"{"name":"camera.takePicture","state":"inProgress","id":"7","progress":{"completion":0.5}}"#.utf8),
            command: "camera.takePicture")
        #expect(running.state == .inProgress && running.id == "7" && running.completion == 0.5)
        #expect(throws: OSCError.self) {
            try OSCCommandResult(json: Data(#"{"name":"x","state":"inProgress"}"#.utf8), command: "x")
        }
        let done = try OSCCommandResult(
            json: Data(
                #"{"name":"camera.stopCapture","state":"done","results":{"fileUrls":["a_00_1.insv","a_10_1.insv"]}}"#
                    .utf8), command: "camera.stopCapture")
        #expect((done.results["fileUrls"] as? [String])?.count == 2)
        let failed = try OSCCommandResult(
            json: Data(
                #"{"name":"camera.startCapture","state":"error","error":{"code":"disabledCommand","message":"busy"}}"#
                    .utf8), command: "camera.startCapture")
        #expect(failed.error?.code == "disabledCommand")
        #expect("\(failed.error!)" == "disabledCommand: busy (the camera refuses this command in its current mode)")
        #expect("\(OSCError(code: "invalidParameterName", message: ""))".contains("does not know a parameter"))
        #expect(
            "\(OSCError(code: "http500", message: "camera answered HTTP 500 to camera.listFiles"))"
                == "camera answered HTTP 500 to camera.listFiles")
        #expect(throws: OSCError.self) {
            try OSCCommandResult(json: Data("{\"state\": ".utf8), command: "camera.listFiles")
        }
    }

    @Test func listFilesEntriesAndPaging() throws {
        let page = try OSCFilePage(results: [
            "entries": [
                [
                    "name": "VID_20261122_182646_00_003.insv",
                    "fileUrl": "http://192.168.42.1:80/DCIM/Camera01/VID_20261122_182646_00_003.insv",
                    "_localFileUrl": "/DCIM/Camera01/VID_20261122_182646_00_003.insv", "size": 14_023_814, "width": 640,
                    "height": 360,
                    "dateTimeZone": "2026:11:22 18:27:46+08:00", "isProcessed": true, "previewUrl": "",
                ]
            ],
            "totalEntries": 10,
        ])
        #expect(page.totalEntries == 10 && page.entries.count == 1)
        let e = try #require(page.entries.first)
        #expect(e.path == "DCIM/Camera01/VID_20261122_182646_00_003.insv" && e.size == 14_023_814)
        #expect(
            try OSCFilePage(results: ["entries": [], "totalEntries": 10]).entries.isEmpty,
            "a startPosition past the end is an empty page")
        #expect(throws: OSCError.self) { try OSCFilePage(results: ["entries": [["name": "x"]], "totalEntries": 1]) }
    }

    @Test func endOfCaptureTimesWithTheirZone() throws {
        let utc = { (s: String) in ISO8601DateFormatter().date(from: s)!.timeIntervalSince1970 }
        #expect(OSC.parseDateTimeZone("2026:11:22 18:27:46+08:00")?.epoch == utc("2026-11-22T10:27:46Z"))
        #expect(OSC.parseDateTimeZone("2026:11:22 05:27:46-05:30")?.epoch == utc("2026-11-22T10:57:46Z"))
        #expect(OSC.parseDateTimeZone("2026:11:22 10:27:46")?.hadZone == false)
        #expect(OSC.parseDateTimeZone("2026:13:22 10:27:46+08:00") == nil && OSC.parseDateTimeZone("yesterday") == nil)
        // A video's time is the END of capture: [end − duration, end].
        let span = try #require(Insta360CardVideo.span(dateTimeZone: "2026:11:22 08:00:30+08:00", duration: 90.5))
        #expect(span.end == utc("2026-11-22T00:00:30Z") && span.start == utc("2026-11-22T00:00:30Z") - 90.5)
    }

    @Test func fileNamesDecideWhatGoesOnTheTimeline() throws {
        let front = try #require(Insta360FileName("VID_20261122_182646_00_003.insv"))
        #expect(front.isVideo && front.is360 && front.lensStream == "00" && front.onTimeline)
        #expect(
            Insta360FileName("VID_20261122_182646_10_003.insv")?.onTimeline == false, "the second lens: same moments")
        #expect(Insta360FileName("VID_20261122_182646_00_004.mp4")?.onTimeline == true, "single-lens MP4")
        #expect(Insta360FileName("IMG_20261122_182646_00_005.insp")?.onTimeline == false)
        #expect(
            Insta360FileName("VID_20261122_182646_01_006.insv")?.onTimeline == false,
            "a second stream of the first lens")
        #expect(Insta360FileName("notes.txt") == nil && Insta360FileName("VID_x.mov") == nil)
    }

    /// Durations from real files (moov at the end, as cameras write, and at the front), read
    /// with a handful of small reads; a file still being written (no moov) is a clear error.
    @Test func readsDurationsFromMP4HeadersWithoutReadingTheFile() throws {
        let dir = TestEnvironment.tempDir("mp4-header")
        defer { TestEnvironment.cleanup(dir) }
        for (name, extra) in [("end.insv", [String]()), ("front.mp4", ["-movflags", "+faststart"])] {
            let path = dir + "/" + name
            let r = try runProcess(
                "/usr/bin/ffmpeg",
                [
                    "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25",
                    "-t", "12.4", "-c:v", "libx264", "-preset", "ultrafast", "-g", "25",
                ] + extra + ["-f", "mp4", path])
            #expect(r.status == 0, "\(r.stderr)")
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            var reads = 0
            var bytes = 0
            let d = try MP4Header.duration(size: Int64(data.count)) { offset, length in
                reads += 1
                let slice = data[Int(offset)..<min(data.count, Int(offset) + length)]
                bytes += slice.count
                return Array(slice)
            }
            #expect(abs(d - 12.4) < 0.05, "\(name): \(d) s")
            #expect(
                reads <= 4 && bytes < 5_000 && bytes * 50 < data.count,
                "\(name): \(reads) reads, \(bytes) of \(data.count) bytes")
        }
        let whole = try Data(contentsOf: URL(fileURLWithPath: dir + "/end.insv"))
        let cut = Array(whole.prefix(whole.count / 2))  // moov not written yet
        #expect(throws: MP4Header.Failure.self) {
            try MP4Header.duration(size: Int64(cut.count)) { offset, length in
                Array(cut[Int(offset)..<min(cut.count, Int(offset) + length)])
            }
        }
    }
}
